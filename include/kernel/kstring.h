/*
 * The C string functions the kernel provides itself (kernel/string.c).
 * Generic code includes this header; built for the host it is libc's.
 */
#ifndef KERNEL_KSTRING_H
#define KERNEL_KSTRING_H

#include <stddef.h>

#if __STDC_HOSTED__
#include <string.h>
#else
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
size_t strnlen(const char *s, size_t max);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
char *strchr(const char *s, int c);
#endif

#endif
