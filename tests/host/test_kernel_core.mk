HOST_TESTS += test_kprintf test_cmdline test_mb2 test_pmm test_acpi
test_kprintf_SRCS := tests/host/test_kprintf.c lib/format.c
test_cmdline_SRCS := tests/host/test_cmdline.c kernel/cmdline.c lib/format.c
test_mb2_SRCS := tests/host/test_mb2.c kernel/mb2.c
test_pmm_SRCS := tests/host/test_pmm.c kernel/pmm.c
test_pmm_CFLAGS := -Iarch/x86/include
test_acpi_SRCS := tests/host/test_acpi.c arch/x86/acpi.c lib/format.c
test_acpi_CFLAGS := -Iarch/x86/include
