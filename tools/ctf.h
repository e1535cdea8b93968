/*
 * CTF 1.8 output of a decoded dump: a directory with a TSDL `metadata`
 * file and one binary stream file per CPU (`stream_<cpu>`), one packet per
 * ring page.  babeltrace2 reads it.  See tools/ctf.c for the layout.
 */
#ifndef TOOLS_CTF_H
#define TOOLS_CTF_H

#include <stdio.h>

#include <trace/dump_read.h>

/*
 * Write r as a CTF trace into dir (created if missing; existing metadata
 * and stream files are replaced).  Problems go to err.  Returns 0, or -1
 * on an I/O error.
 */
int ctf_write(const char *dir, const struct dump_result *r, FILE *err);

#endif
