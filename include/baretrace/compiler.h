/*
 * Compiler helpers shared by the kernel, the trace core and host tools.
 * Freestanding: no libc here.
 */
#ifndef BARETRACE_COMPILER_H
#define BARETRACE_COMPILER_H

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

#define __packed	__attribute__((packed))
#define __aligned(n)	__attribute__((aligned(n)))
#define __unused	__attribute__((unused))
#define __noreturn	__attribute__((noreturn))
#define __section(s)	__attribute__((section(s)))
#define __used		__attribute__((used))
#define __printf(a, b)	__attribute__((format(printf, a, b)))
#undef __always_inline	/* glibc's sys/cdefs.h has one too: same meaning */
#define __always_inline	inline __attribute__((always_inline))
#define __noinline	__attribute__((noinline))
/* Never a function tracer site (-fpatchable-function-entry): code the tracer runs on. */
#define notrace		__attribute__((no_instrument_function, patchable_function_entry(0, 0)))

/* Stop the compiler moving memory accesses across this point. */
#define barrier()	__asm__ __volatile__("" ::: "memory")

/* One access, neither torn nor merged nor re-read (Linux's READ_ONCE). */
#define READ_ONCE(x)	 (*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define ALIGN_UP(x, a)	(((x) + ((a) - 1)) & ~((__typeof__(x))(a) - 1))
#define ALIGN_DOWN(x, a) ((x) & ~((__typeof__(x))(a) - 1))

#define CACHELINE_SIZE	64

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - __builtin_offsetof(type, member)))

#endif
