; Multiboot2 header (Multiboot2 specification, section 3.1).
; GRUB looks for it in the first 32 KiB of the image, 8-byte aligned.
; We ask for: an ELF image loaded at its physical addresses, EGA text
; supported, and (optionally) a linear framebuffer, so that GRUB sets a
; graphics mode under UEFI where there is no text mode. Under BIOS grub.cfg
; says gfxpayload=text, which keeps VGA text mode despite this request.

MB2_MAGIC	equ 0xE85250D6
MB2_ARCH_I386	equ 0			; protected-mode i386 entry
MB2_TAG_END	equ 0
MB2_TAG_FLAGS	equ 4			; console flags tag
MB2_CONSOLE_EGA	equ 2			; "EGA text supported"
MB2_TAG_FB	equ 5			; framebuffer request
MB2_TAG_OPTIONAL equ 1
FB_WIDTH	equ 1024		; preferred mode; GRUB picks the nearest it has
FB_HEIGHT	equ 768
FB_DEPTH	equ 32

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

	; framebuffer: optional, so a loader without one still boots us
	align 8
	dw MB2_TAG_FB
	dw MB2_TAG_OPTIONAL
	dd 20
	dd FB_WIDTH
	dd FB_HEIGHT
	dd FB_DEPTH

	align 8
	dw MB2_TAG_END
	dw 0
	dd 8
mb2_header_end:
