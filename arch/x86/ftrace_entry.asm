; The function tracer's trampolines (kernel/tracer/ftrace.c, docs/ftrace.md).
;
; ftrace_caller: where an enabled site's `call rel32` goes, at the very
; start of a traced function, before its prologue. Stack on entry:
;
;   rsp -> site + 5          (our return: the function's first instruction after the site)
;          parent            (the function's return address, into its caller)
;
; The function has done nothing yet, so the registers hold its caller's
; arguments: rdi rsi rdx rcx r8 r9, and al (the vector-register count of a
; varargs call). They are saved and restored; r10 and r11 are scratch at a
; function's entry in the SysV ABI and carry nothing the function reads
; (r10 only for GCC's nested functions, which the kernel has none of), so
; they are not. rbp is pushed to keep the frame chain walkable through the
; tracer (backtraces). 8 pushes after the site's call: 16-byte aligned for
; the C call, as the ABI wants.
;
; ftrace_entry(ip, parent_slot): ip = the site, which is the traced
; function's first byte; parent_slot = where its return address lives;
; function_graph replaces *parent_slot with ftrace_return_to_handler.
;
; ftrace_return_to_handler: where a function whose return was taken over
; returns to. rax and rdx hold its return value. ftrace_return(E) gives
; back the original return address (from the CPU's shadow stack), which we
; return through a slot just below E, rsp as the function's ret left it:
; the caller's rsp after its call returns, which the caller had 16-byte
; aligned for the call. Slot, rax, rdx and a pad keep the C call aligned.

bits 64
section .text

extern ftrace_entry
extern ftrace_return
global ftrace_caller
global ftrace_caller_end
global ftrace_return_to_handler

ftrace_caller:
	push rbp
	mov rbp, rsp
	push rax
	push rdi
	push rsi
	push rdx
	push rcx
	push r8
	push r9
	mov rdi, [rbp + 8]
	sub rdi, 5			; the site: the traced function's first byte
	lea rsi, [rbp + 16]		; its return-address slot
	call ftrace_entry
	pop r9
	pop r8
	pop rcx
	pop rdx
	pop rsi
	pop rdi
	pop rax
	pop rbp
	ret
ftrace_caller_end:

ftrace_return_to_handler:
	sub rsp, 8			; E - 8: the slot for the real return address
	push rax
	push rdx
	sub rsp, 8			; E - 32: aligned for the call
	lea rdi, [rsp + 32]		; E: rsp as the function's ret left it
	call ftrace_return
	mov [rsp + 24], rax
	add rsp, 8
	pop rdx
	pop rax
	ret				; through the slot: rsp is E again

section .note.GNU-stack noalloc noexec nowrite progbits
