# baretrace-decode --lab: the lab's summaries and pictures from a capture's events.
HOST_TESTS += test_lab_summary
test_lab_summary_SRCS := tests/host/test_lab_summary.c tools/lab_summary.c tools/lab_plot.c \
	trace/lab.c $(DUMP_READ_SRCS)
test_lab_summary_LIBS := -lm
