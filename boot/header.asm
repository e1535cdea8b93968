; Multiboot2 header (Multiboot2 specification, section 3.1).
; GRUB looks for it in the first 32 KiB of the image, 8-byte aligned.
; We ask for nothing special: an ELF image loaded at its physical addresses,
; a console (EGA text) preferred under BIOS, boot services exited under EFI.

MB2_MAGIC	equ 0xE85250D6
MB2_ARCH_I386	equ 0			; protected-mode i386 entry
MB2_TAG_END	equ 0
MB2_TAG_FLAGS	equ 4			; console flags tag
MB2_CONSOLE_EGA	equ 2			; "EGA text supported"

section .multiboot2 align=8
mb2_header:
	dd MB2_MAGIC
	dd MB2_ARCH_I386
	dd mb2_header_end - mb2_header
	dd -(MB2_MAGIC + MB2_ARCH_I386 + (mb2_header_end - mb2_header))

	; console flags: we can drive EGA text (optional, not required)
	align 8
	dw MB2_TAG_FLAGS
	dw 0				; flags: optional
	dd 12
	dd MB2_CONSOLE_EGA

	align 8
	dw MB2_TAG_END
	dw 0
	dd 8
mb2_header_end:
