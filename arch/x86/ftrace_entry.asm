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
; varargs call). Whatever we change of them is saved and restored; r10 and
; r11 are scratch at a function's entry in the SysV ABI and carry nothing
; the function reads (r10 only for GCC's nested functions, which the kernel
; has none of), so they are used freely.
;
; Two ways through:
;
; - The function tracer's fast path (below, `function` only): the event
;   written here, no C call, three registers saved. It is the ring buffer's
;   reservation fast path (rb_reserve() in <trace/ring_buffer.h>, points
;   /A/../G/ as labelled there) for the one fixed-size event, step for step
;   in the same order, so the buffer's invariants hold as they do for the C
;   writers. Whatever that fast path would hand to a slow path is handed to
;   the same one: before the level bit is taken, to the full path below (its
;   C writer sorts out recording off, a refused buffer, nesting); after, to
;   ftrace_function_slow() (rb_reserve_slow() with what the C fast path
;   would pass), and a commit that finds flags to rb_commit_slow().
; - The full path (ftrace_caller_full): everything saved, rbp pushed to keep
;   the frame chain walkable, then ftrace_entry(ip, parent_slot): ip = the
;   site, which is the traced function's first byte; parent_slot = where its
;   return address lives; function_graph replaces *parent_slot with
;   ftrace_return_to_handler. 8 pushes after the site's call: 16-byte
;   aligned for the C call, as the ABI wants.
;
; The recursion guard: the fast path calls nothing, so it cannot recurse by
; itself; it still defers to a C hook of its own level that is running
; (%gs:ftrace_busy), which then counts the recursion.
;
; ftrace_return_to_handler: where a function whose return was taken over
; returns to. rax and rdx hold its return value. ftrace_return(E) gives
; back the original return address (from the CPU's shadow stack), which we
; return through a slot just below E, rsp as the function's ret left it:
; the caller's rsp after its call returns, which the caller had 16-byte
; aligned for the call. Slot, rax, rdx and a pad keep the C call aligned.
;
; Layouts used here are C's; kernel/tracer/ftrace.c checks every constant
; below against offsetof() and the enums (ftrace_asm_check()).

bits 64

; struct percpu
%define PC_LEVEL_BIT	0x1c		; trace.level_bit
%define PC_ENT_CTX	0x20		; trace.ent_ctx
%define PC_RB		0x28		; rb
%define PC_FTRACE_BUSY	0x24		; ftrace_busy
; struct rb_cpu_buffer
%define CB_WRITE	0x00
%define CB_TAIL_BASE	0x08
%define CB_TAIL_PAGE	0x10
%define CB_STATE	0x18
%define CB_NEST		0x1c
%define CB_CAP		0x20
%define RB_STATE_RECORDING	2
%define RB_SLOW_AFTER_XADD	1
%define RB_DELTA_LIMIT	(1 << 27)
; the page and the record
%define PAGE_HEADER	48		; RB_PAGE_HEADER_SIZE
%define PAGE_ENTRIES	36		; offsetof(struct rb_page_header, entries)
%define FN_LEN		20		; sizeof(struct trace_ev_function)
%define FN_REC		24		; rb_data_record_size(FN_LEN): word + payload
%define FN_WORD		(5 << 27)	; rb_record_word(FN_LEN / 4, 0)
%define FN_ENT		(12 | 4 << 24)	; trace_ent_pack(TEV_function, 0, 4)
%define FN_IP		4		; offsetof(struct trace_ev_function, ip)
%define FN_PARENT	12		; ... parent_ip
%define TEV_FUNCTION	12
%define FTRACE_FUNCTION	1		; enum ftrace_tracer
%define SITE_LEN	5

section .text

extern ftrace_entry
extern ftrace_return
extern ftrace_function_slow
extern rb_commit_slow
extern ftrace_mode
extern trace_event_keys
global ftrace_caller
global ftrace_caller_end
global ftrace_return_to_handler

ftrace_caller:
	cmp dword [rel ftrace_mode], FTRACE_FUNCTION
	jne ftrace_caller_full
	cmp dword [rel trace_event_keys + TEV_FUNCTION * 4], 0	; the event's key
	je ftrace_caller_full
	push rax
	push rdx
	push rcx
	mov r10d, [gs:PC_LEVEL_BIT]
	test [gs:PC_FTRACE_BUSY], r10d		; a C hook of this level is running
	jnz .full
	mov r11, [gs:PC_RB]			; cb
	cmp dword [r11 + CB_STATE], RB_STATE_RECORDING
	jne .full
	cmp [r11 + CB_NEST], r10d		; I7: no writer at our level or above
	jae .full
	or [r11 + CB_NEST], r10d		; one instruction: the level bit is ours
	mov rcx, [r11 + CB_WRITE]		; /A/ w0
	mov r10, [r11 + CB_TAIL_PAGE]		; page, read between /A/ and /C/
.stamp:	rdtsc					; /B/
	sub eax, [r11 + CB_TAIL_BASE]
	sbb edx, [r11 + CB_TAIL_BASE + 4]
	jne .slow_b				; not within 2^32 of the base
	cmp eax, RB_DELTA_LIMIT - 1
	ja .slow_b
	mov edx, FN_REC
	xadd [r11 + CB_WRITE], rdx		; /C/ local: no LOCK (only this CPU)
	cmp rdx, rcx				; /D/ I1: nothing in between
	jne .slow_d
	lea edx, [rcx + FN_REC]			; the record's end, zero-extended
	cmp edx, [r11 + CB_CAP]
	ja .slow_cap				; past the page: the slow path closes it
%define REC (r10 + rdx + PAGE_HEADER - FN_REC)	; the record: page + header + offset
	or eax, FN_WORD
	mov [REC], eax				; /E/ record word: kind, delta
	add dword [r10 + PAGE_ENTRIES], 1
	mov eax, [gs:PC_ENT_CTX]
	or eax, FN_ENT
	mov [REC + 4], eax			; the event's header word
	mov rax, [rsp + 24]
	sub rax, SITE_LEN
	mov [REC + 4 + FN_IP], rax
	mov rax, [rsp + 32]
	mov [REC + 4 + FN_PARENT], rax
	mov edx, [gs:PC_LEVEL_BIT]
	sub [r11 + CB_NEST], edx		; /F, G/ after the stores
	jne .slow_commit
	pop rcx
	pop rdx
	pop rax
	ret

.full:						; before the level bit: the C path
	pop rcx
	pop rdx
	pop rax
	jmp ftrace_caller_full

.slow_b:					; rb_reserve_slow(cb, len, 0, 0, 0)
	xor ecx, ecx
	xor r10d, r10d
	xor r11d, r11d
	jmp .slow
.slow_cap:					; w was w0 (/D/ held); rdx is the end now
	mov rdx, rcx
.slow_d:					; ... (cb, len, AFTER_XADD, w, w0)
	mov r10, rcx
	mov rcx, rdx
	mov r11d, RB_SLOW_AFTER_XADD
.slow:						; ftrace_function_slow(ip, parent, how, w, w0)
	push rdi
	push rsi
	push r8
	push r9
	sub rsp, 8				; 8 words on the site's call: aligned
	mov r8, r10
	mov edx, r11d
	mov rdi, [rsp + 64]
	sub rdi, SITE_LEN
	mov rsi, [rsp + 72]
	call ftrace_function_slow
	jmp .restore

.slow_commit:					; rb_commit_slow(cb, bit)
	push rdi
	push rsi
	push r8
	push r9
	sub rsp, 8
	mov rdi, r11
	mov esi, edx
	call rb_commit_slow
.restore:
	add rsp, 8
	pop r9
	pop r8
	pop rsi
	pop rdi
	pop rcx
	pop rdx
	pop rax
	ret

ftrace_caller_full:
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
	sub rdi, SITE_LEN		; the site: the traced function's first byte
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

; The stamp is a TSC site like the C writers' (<arch/tsc_site.h>).
section tsc_sites progbits alloc noexec nowrite align=8
	dq ftrace_caller.stamp, 2

section .note.GNU-stack noalloc noexec nowrite progbits
