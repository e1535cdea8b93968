# A boot keyboard's reports to characters (drivers/usb/hid_boot.c).
HOST_TESTS += test_hid_boot
test_hid_boot_SRCS := tests/host/test_hid_boot.c drivers/usb/hid_boot.c
