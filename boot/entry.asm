; 32-bit Multiboot2 entry: check the CPU, identity-map the first 4 GiB, enter
; long mode and call kernel_main(mbi_phys).
;
; On entry (Multiboot2 spec 3.3): 32-bit protected mode, paging off,
; EAX = 0x36D76289, EBX = physical address of the boot information,
; no usable stack, interrupts off. Under EFI, boot services are exited.
;
; Memory map of the boot page tables (all in .bss, cleared here first):
;
;   boot_pml4[0] -> boot_pdpt
;   boot_pdpt[0..3] -> boot_pd + 0..3 pages
;   boot_pd[i] = i * 2 MiB | PS | RW | P      i = 0 .. 2047  (0 .. 4 GiB)
;
; That covers the kernel, the boot information, the ACPI tables, the LAPIC
; (0xFEE00000), the IOAPIC and the HPET (0xFED00000). RAM above 4 GiB is
; mapped later from C (paging.c) once the memory map is known.

MB2_BOOT_MAGIC	equ 0x36D76289
COM1		equ 0x3F8
UART_LSR	equ 5
LSR_THRE	equ 0x20
VGA_TEXT	equ 0xB8000

CR0_PE		equ 1 << 0
CR0_WP		equ 1 << 16
CR0_PG		equ 1 << 31
CR4_PAE		equ 1 << 5
MSR_EFER	equ 0xC0000080
EFER_LME	equ 1 << 8
PTE_P		equ 1 << 0
PTE_RW		equ 1 << 1
PTE_PS		equ 1 << 7
EFLAGS_ID	equ 1 << 21
CPUID_EXT_LM	equ 1 << 29

BOOT_STACK_SIZE	equ 16384

extern kernel_main
extern __bss_start
extern __bss_end

global _start
global boot_stack_top
global boot_pml4

section .boot.text progbits alloc exec nowrite align=16
bits 32
_start:
	cli
	cld
	mov ebp, eax			; keep the magic
	mov [boot_mbi], ebx		; CPUID below clobbers EBX

	; Clear .bss (page tables and stack live there).
	mov edi, __bss_start
	mov ecx, __bss_end
	sub ecx, edi
	shr ecx, 2
	xor eax, eax
	rep stosd
	mov esp, boot_stack_top

	cmp ebp, MB2_BOOT_MAGIC
	jne .no_multiboot

	; CPUID exists if EFLAGS.ID can be toggled.
	pushfd
	pop eax
	mov ecx, eax
	xor eax, EFLAGS_ID
	push eax
	popfd
	pushfd
	pop eax
	push ecx
	popfd
	cmp eax, ecx
	je .no_long_mode

	mov eax, 0x80000000
	cpuid
	cmp eax, 0x80000001
	jb .no_long_mode
	mov eax, 0x80000001
	cpuid
	test edx, CPUID_EXT_LM
	jz .no_long_mode

	; Build the identity map (see the diagram above).
	mov eax, boot_pdpt
	or eax, PTE_P | PTE_RW
	mov [boot_pml4], eax

	xor ecx, ecx
.pdpt:
	mov eax, ecx
	shl eax, 12
	add eax, boot_pd
	or eax, PTE_P | PTE_RW
	mov [boot_pdpt + ecx * 8], eax
	inc ecx
	cmp ecx, 4
	jne .pdpt

	xor ecx, ecx
.pd:
	mov eax, ecx
	shl eax, 21
	or eax, PTE_P | PTE_RW | PTE_PS
	mov [boot_pd + ecx * 8], eax
	inc ecx
	cmp ecx, 2048
	jne .pd

	mov eax, boot_pml4
	mov cr3, eax
	mov eax, cr4
	or eax, CR4_PAE
	mov cr4, eax
	mov ecx, MSR_EFER
	rdmsr
	or eax, EFER_LME
	wrmsr
	mov eax, cr0
	or eax, CR0_PG | CR0_WP | CR0_PE
	mov cr0, eax

	lgdt [boot_gdt_ptr]
	jmp 0x08:long_entry

.no_multiboot:
	mov esi, msg_no_mb2
	jmp .fatal
.no_long_mode:
	mov esi, msg_no_lm
.fatal:
	call early_puts
.halt:
	cli
	hlt
	jmp .halt

; early_puts: write the NUL-terminated string at ESI to COM1 (polled, bounded
; wait so a missing UART cannot hang us) and to the top row of VGA text memory.
early_puts:
	mov edi, VGA_TEXT
.next:
	lodsb
	test al, al
	jz .done
	mov ah, 0x4F			; white on red
	mov [edi], ax
	add edi, 2
	mov bl, al
	mov ecx, 100000
	mov dx, COM1 + UART_LSR
.wait:
	in al, dx
	test al, LSR_THRE
	jnz .send
	loop .wait
.send:
	mov dx, COM1
	mov al, bl
	out dx, al
	jmp .next
.done:
	ret

bits 64
long_entry:
	mov ax, 0x10
	mov ds, ax
	mov es, ax
	mov ss, ax
	xor eax, eax
	mov fs, ax
	mov gs, ax
	mov rsp, boot_stack_top
	xor ebp, ebp			; ends the frame-pointer chain
	mov edi, [boot_mbi]		; kernel_main(mbi_phys)
	call kernel_main
.hang:
	cli
	hlt
	jmp .hang

section .boot.rodata progbits alloc noexec nowrite align=16
msg_no_mb2:
	db "baretrace: not started by a Multiboot2 loader; halting", 13, 10, 0
msg_no_lm:
	db "baretrace: this CPU has no long mode (x86-64); halting", 13, 10, 0

; Temporary GDT: null, 64-bit code (0x08), data (0x10). gdt.c replaces it.
align 16
boot_gdt:
	dq 0
	dq 0x00AF9A000000FFFF
	dq 0x00CF92000000FFFF
boot_gdt_end:
boot_gdt_ptr:
	dw boot_gdt_end - boot_gdt - 1
	dd boot_gdt

section .data
boot_mbi:	dd 0			; in .data: .bss is cleared after we store it

section .bss nobits alloc noexec write align=4096
boot_pml4:	resb 4096
boot_pdpt:	resb 4096
boot_pd:	resb 4 * 4096
boot_stack:	resb BOOT_STACK_SIZE
boot_stack_top:
