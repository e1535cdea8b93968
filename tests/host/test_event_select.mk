# Event selection by pattern (trace.events=, the shell's events) and its summary line.
HOST_TESTS += test_event_select
test_event_select_SRCS := tests/host/test_event_select.c trace/event_select.c \
	trace/event_catalog.c lib/format.c
