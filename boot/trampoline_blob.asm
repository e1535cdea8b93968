; The assembled trampoline, carried in the kernel image for smp.c to copy.
section .rodata
global trampoline_start, trampoline_end
trampoline_start:
	incbin "trampoline.bin"
trampoline_end:
