; Interrupt entry stubs. Each vector pushes a dummy error code when the CPU
; does not, then its vector number, and joins isr_common, which saves the
; general registers as a struct trap_frame (arch/trap.h) and calls
; trap_dispatch(frame). Stack after the pushes, from the top (lowest address):
;
;   rsp -> r15 r14 r13 r12 r11 r10 r9 r8 rbp rdi rsi rdx rcx rbx rax
;          vector error_code | rip cs rflags rsp ss   (pushed by the CPU)
;
; 15 + 2 + 5 quadwords = 176 bytes, a multiple of 16, and the CPU aligned RSP
; to 16 before its pushes, so the call below is made with an aligned stack.

bits 64
section .text

extern trap_dispatch
global isr_stub_table

%macro STUB_NOERR 1
isr_stub_%1:
	push 0
	push %1
	jmp isr_common
%endmacro

%macro STUB_ERR 1
isr_stub_%1:
	push %1
	jmp isr_common
%endmacro

; Vectors with a CPU-pushed error code: 8 10 11 12 13 14 17 21 29 30.
%assign v 0
%rep 256
%if v == 8 || (v >= 10 && v <= 14) || v == 17 || v == 21 || v == 29 || v == 30
	STUB_ERR v
%else
	STUB_NOERR v
%endif
%assign v v + 1
%endrep

isr_common:
	cld
	push rax
	push rbx
	push rcx
	push rdx
	push rsi
	push rdi
	push rbp
	push r8
	push r9
	push r10
	push r11
	push r12
	push r13
	push r14
	push r15
	mov rdi, rsp
	call trap_dispatch
	pop r15
	pop r14
	pop r13
	pop r12
	pop r11
	pop r10
	pop r9
	pop r8
	pop rbp
	pop rdi
	pop rsi
	pop rdx
	pop rcx
	pop rbx
	pop rax
	add rsp, 16		; vector and error code
	iretq

section .rodata
align 8
isr_stub_table:
%assign v 0
%rep 256
	dq isr_stub_ %+ v
%assign v v + 1
%endrep
