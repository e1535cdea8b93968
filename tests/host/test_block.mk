# The USB stick's partition table, FAT32 reader and trace-file header
# (drivers/block/), and tracefile_write_ok(), on disks built in memory.
# Images made by mkfs.fat, sfdisk and mtools are tests/tools/test_usb_image.py's.
HOST_TESTS += test_block
test_block_SRCS := tests/host/test_block.c $(BLOCK_SRCS)
# The same sources must build as kernel code (freestanding, no SSE) before
# the kernel links them: test_block is not built before they do.
BLOCK_KCHECK_OBJS := $(patsubst %.c,$(BUILD)/host/kcheck/%.o,$(filter drivers/%,$(BLOCK_SRCS)))
test_block_DEPS := $(BLOCK_KCHECK_OBJS)
.PHONY: block-kcheck
block-kcheck: $(BLOCK_KCHECK_OBJS)

