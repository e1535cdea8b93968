; Interrupt entry stubs. Each vector pushes a dummy error code when the CPU
; does not, then its vector number, and joins isr_common, which saves the
; general registers as a struct trap_frame (arch/trap.h) and calls
; trap_dispatch(frame); #BP and #UD join isr_common_noiret, the same but
; returning without iretq (see there). Stack after the pushes, from the top (lowest address):
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

; #BP and #UD return without iretq (isr_common_noiret below).
%macro STUB_NOIRET 1
isr_stub_%1:
	push 0
	push %1
	jmp isr_common_noiret
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
%elif v == 3 || v == 6
	STUB_NOIRET v
%else
	STUB_NOERR v
%endif
%assign v v + 1
%endrep

%macro SAVE_AND_DISPATCH 0
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
%endmacro

isr_common:
	SAVE_AND_DISPATCH
	pop rbx
	pop rax
	add rsp, 16		; vector and error code
	iretq

; The #BP and #UD path. The only #UD that returns is a TSC read rewritten by
; inject.tsc_skew (arch/x86/time/tsc_inject.c), the only #BP (ktests aside) a
; static-key site being patched (arch/x86/jump_label.c), and either may sit
; in an NMI handler:
; an iretq there would end the CPU's NMI blocking early, and the next NMI
; would nest on the NMI's IST stack. So return the way a function does.
; This kernel runs only at CPL 0 and neither has an IST stack, so the CPU pushed
; the frame on the interrupted stack itself: with t = the interrupted RSP,
; the frame's top is t or t - 8 (the CPU aligned RSP to 16 first), so its
; rip slot is at t - 40 or t - 48, and the stub's words and the saved
; registers lie below that. Stack here, rbx and rax still to restore:
;
;   rsp -> rbx rax vector error_code rip cs rflags rsp(=t) ss
;
; Written, in this order: t - 16 <- rflags, t - 8 <- rip, t - 24 <- rax,
; t - 32 <- rbx. These words may overlap only the frame's cs, rflags, rsp
; and ss slots (rip's is below t - 32), and rflags and t are read first.
; Then RSP = t - 32: pop rbx, rax, popfq (IF back as interrupted; an
; interrupt taken before the ret pushes below the rip word), ret.
isr_common_noiret:
	SAVE_AND_DISPATCH
	mov rax, [rsp + 56]	; t
	mov rbx, [rsp + 48]	; rflags
	mov [rax - 16], rbx
	mov rbx, [rsp + 32]	; rip
	mov [rax - 8], rbx
	mov rbx, [rsp + 8]	; rax
	mov [rax - 24], rbx
	mov rbx, [rsp]		; rbx
	mov [rax - 32], rbx
	lea rsp, [rax - 32]
	pop rbx
	pop rax
	popfq
	ret

section .rodata
align 8
isr_stub_table:
%assign v 0
%rep 256
	dq isr_stub_ %+ v
%assign v v + 1
%endrep
