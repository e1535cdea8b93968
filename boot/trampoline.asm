; AP start-up trampoline: 16-bit real mode -> 32-bit protected -> long mode,
; then a call into C. Assembled flat (nasm -f bin) for address TRAMP_BASE;
; smp.c copies it there and fills the parameter block before each SIPI.
; A SIPI with vector TRAMP_BASE >> 12 starts the AP at CS = TRAMP_BASE >> 4,
; IP = 0, which with org TRAMP_BASE and DS = 0 makes every label a linear
; address.
;
;   TRAMP_BASE + 0x000  code (this file)
;   TRAMP_BASE + 0xF00  parameter block, written by the BSP:
;        +0x00 cr3      page-table root (the kernel's, below 4 GiB)
;        +0x08 stack    top of this AP's kernel stack
;        +0x10 entry    C function to call: void ap_entry(struct percpu *)
;        +0x18 arg      its argument
;        +0x20 started  set to 1 by the AP as soon as it runs (16-bit code)

TRAMP_BASE	equ 0x8000
PARAMS		equ TRAMP_BASE + 0xF00

bits 16
org TRAMP_BASE

ap_start16:
	cli
	cld
	xor ax, ax
	mov ds, ax
	mov byte [PARAMS + 0x20], 1
	lgdt [tramp_gdt_ptr]
	mov eax, cr0
	or eax, 1			; PE
	mov cr0, eax
	jmp dword 0x08:ap_start32

bits 32
ap_start32:
	mov ax, 0x10
	mov ds, ax
	mov es, ax
	mov ss, ax
	mov eax, [PARAMS + 0x00]
	mov cr3, eax
	mov eax, cr4
	or eax, 1 << 5			; PAE
	mov cr4, eax
	mov ecx, 0xC0000080		; EFER
	rdmsr
	or eax, 1 << 8			; LME
	wrmsr
	mov eax, cr0
	or eax, (1 << 31) | (1 << 16)	; PG, WP
	mov cr0, eax
	jmp 0x18:ap_start64

bits 64
ap_start64:
	mov ax, 0x10
	mov ds, ax
	mov es, ax
	mov ss, ax
	mov rsp, [PARAMS + 0x08]
	mov rdi, [PARAMS + 0x18]
	mov rax, [PARAMS + 0x10]
	xor ebp, ebp			; ends the frame-pointer chain
	call rax
.hang:
	cli
	hlt
	jmp .hang

align 16
tramp_gdt:
	dq 0
	dq 0x00CF9A000000FFFF		; 0x08: 32-bit code
	dq 0x00CF92000000FFFF		; 0x10: data
	dq 0x00AF9A000000FFFF		; 0x18: 64-bit code
tramp_gdt_end:
tramp_gdt_ptr:
	dw tramp_gdt_end - tramp_gdt - 1
	dd tramp_gdt

times 0xF00 - ($ - $$) db 0		; the parameter block follows
