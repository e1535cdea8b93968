# The 16550 driver against a register-level model: I/O ports and MMIO.
HOST_TESTS += test_uart
test_uart_SRCS := tests/host/test_uart.c arch/x86/uart.c
test_uart_CFLAGS := -Itests/host/uart -Iarch/x86/include
