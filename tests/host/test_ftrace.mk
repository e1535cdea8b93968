# The function tracer's portable parts: the site table and filters
# (kernel/tracer/ftrace/ftrace_sites.c), and the function/graph text (trace/text.c,
# trace/text_ftrace.c) from synthetic events in a real ring buffer.
HOST_TESTS += test_ftrace
test_ftrace_SRCS := tests/host/test_ftrace.c kernel/tracer/ftrace/ftrace_sites.c \
	trace/ring_buffer.c trace/ring_reader.c $(DUMP_READ_SRCS)
