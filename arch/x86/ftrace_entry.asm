; The function tracer's trampolines (kernel/tracer/ftrace/ftrace.c, docs/ftrace.md).
;
; ftrace_caller (function) and ftrace_graph_caller (function_graph): where
; an enabled site's `call rel32` goes, at the very start of a traced
; function, before its prologue; the tracer chooses which by rewriting the
; sites (kernel/tracer/ftrace/ftrace.c), so neither reads the mode. Each starts
; with a static-key site of its event's key (KEY_ON): while the event is
; disabled, the C path (which finds it disabled). Stack on entry:
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
; Three ways through:
;
; - The function tracer's fast path (ftrace_caller): the event
;   written here, no C call, three registers saved. It is the ring buffer's
;   reservation fast path (rb_reserve() in <trace/ring_buffer.h>, points
;   /A/../G/ as labelled there) for the one fixed-size event, step for step
;   in the same order, so the buffer's invariants hold as they do for the C
;   writers. Whatever that fast path would hand to a slow path is handed to
;   the same one: before the level bit is taken, to the full path below (its
;   C writer sorts out recording off, a refused buffer, nesting); after, to
;   ftrace_function_slow() (rb_reserve_slow() with what the C fast path
;   would pass), and a commit that finds flags to rb_commit_slow().
; - function_graph's fast path (ftrace_graph_caller): the ring buffer's
;   guard compare, and the shadow stack's: this CPU's and level's stack
;   (%gs:trace_ctx.graph_stack, never NULL), its word (depth | busy << 32)
;   below ftrace_graph_fast_limit (the depth limit, 0 while
;   ftrace.graph_function is set; a C hook of this level running makes the
;   word 2^32 or more, and a CPU without stacks points at a stack that is
;   always full); then the frame pushed in G1's order (frame, depth, slot:
;   kernel/tracer/ftrace/ftrace.c), and funcgraph_entry written as `function`'s
;   event is, with one clock read for both the event's stamp and the
;   frame's calltime. Anything else goes to the full path before a thing
;   has changed; the reservation's slow paths after the push go to
;   ftrace_graph_entry_slow() and rb_commit_slow().
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
; returns to, at E: rsp as the function's ret left it (the caller's rsp
; after its call returns, which the caller had 16-byte aligned for the
; call). rax and rdx hold its return value; every other caller-saved
; register is dead at a return, so they are used freely. The fast path
; pops the top frame of this CPU's and level's stack if it is this
; return's (its sp is E: G3's common case, no stale frames), with rax and
; rdx saved at E - 8 and E - 16 (aligned for a C call), and writes
; funcgraph_exit as the entry wrote its event, the exit's stamp also
; giving the call's cycles; anything else, before a thing has changed,
; goes to ftrace_return() (stale frames, the event off, recording off or
; nested), the reservation's slow paths after the pop to
; ftrace_graph_exit_slow() and rb_commit_slow(). Then rax and rdx come
; back and it jumps to the real return address. No busy check here: a
; C hook of this level runs only inside a traced call's entry or return,
; never across a return of its level, and a call entered while it runs
; goes to it (busy) and is not taken over.
;
; Nothing else runs at this level on this CPU while either path works on
; the level's stack: an IRQ or NMI has a level and a stack of its own and
; leaves ours as it found it; the only exception these paths can take is
; their TSC site's #UD (inject.tsc_skew), whose handler has no sites. So
; the frame and the depth may be written in any order the C hooks could
; see; G1's order (frame, depth, slot) is kept all the same.
;
; Layouts used here are C's: every constant below (PC_*, CB_*, ST_*, the
; events' FN_*, GE_*, GX_*) comes from kernel/tracer/asm_offsets.c, generated
; at build time, never typed here.

bits 64

%include "asm_offsets.inc"

; The per-CPU variables the PC_* offsets name (link-time: symbol + offset).
extern trace_ctx
extern tracing_rb
extern ftrace_busy
extern ftrace_overrun

; A static-key site (<arch/jump_label.h>) in the trampolines: the 5-byte NOP
; while key %1 is disabled, `jmp %2` while it is enabled, and its
; __jump_table record { site, target, key }. The key's changes patch it with
; the C sites of the key (kernel/static_key.c): one instruction either way.
%macro KEY_ON 2
section __jump_table progbits alloc noexec nowrite align=8
	dq %%site, %2, %1			; (first: nasm -g types a label by what follows it)
section .text
%%site:	nop dword [byte rax + rax * 1 + 0]	; 0f 1f 44 00 00
%endmacro

; May this context write here and now? No C hook of its level running
; (%gs:ftrace_busy), then rb_reserve()'s one compare of the guard word
; (64 bits: the gate says recording, I12; nest says no writer at our level
; or above, I7). Any no goes to %1, before anything has changed. Leaves
; the level bit in r10 (zero-extended) and the buffer (cb) in r11.
%macro MAY_WRITE 1
	mov r10d, [gs:PC_LEVEL_BIT]
	test [gs:PC_FTRACE_BUSY], r10d
	jnz %1
	mov r11, [gs:PC_RB]
	cmp [r11 + CB_GUARD], r10
	jae %1
%endmacro

; /C/ to /E/ of rb_reserve() for one fixed-size record: %1 its bytes, %2
; its record word (kind), %3 its event header (id, words; the context comes
; from %gs), %4 a free register (%5: its 32-bit half), %6 holding w0 (/A/),
; %7 the page, %8 the delta (64 bits, below 2^27, /B/); the slow ways out are
; %9_d and %9_cap; %10 a register free once w0 is compared (w0's own). Then
; the record starts at %7 + %4 + PAGE_HEADER - %1 (%4: its end's offset,
; zero-extended), its record word and event header written in one 64-bit
; store (rb_head_word() and ring_buffer_reserve_head() in C), and the page's
; count.
%macro RESERVE 10
	mov %5, %1
	xadd [r11 + CB_WRITE], %4		; /C/ local: no LOCK (only this CPU)
	cmp %4, %6				; /D/ I1: nothing in between
	jne %{9}_d
	lea %5, [%6 + %1]			; the record's end, zero-extended
	cmp %5, [r11 + CB_CAP]
	ja %{9}_cap				; past the page: the slow path closes it
	mov %10, (%3 << 32) | %2		; head: event header, record word
	or %10, [gs:PC_ENT_HI]			; | the context bits (<< 48)
	or %10, %8				; | the delta
	mov [%7 + %4 + PAGE_HEADER - %1], %10	; /E/ record word and header
	add dword [%7 + PAGE_ENTRIES], 1
%endmacro

; How the graph paths hand a reservation to rb_reserve_slow(cb, len, how,
; w, w0), as rb_reserve() does: %1 the label stem (%1_b, %1_cap, %1_d come
; in, %1 goes on), %2 the register holding the xadd's result w; w0 is in
; r10, how goes to r11d.
%macro TO_SLOW 2
%{1}_b:					; /B/ failed: (cb, len, 0, 0, 0)
	xor %2, %2
	xor r10d, r10d
	xor r11d, r11d
	jmp %1
%{1}_cap:				; past the page: w was w0 (/D/ held)
	mov %2, r10
%{1}_d:					; /D/ failed: (cb, len, AFTER_XADD, w, w0)
	mov r11d, RB_SLOW_AFTER_XADD
%1:
%endmacro

section .text

extern ftrace_entry
extern ftrace_return
extern ftrace_function_slow
extern ftrace_graph_entry_slow
extern ftrace_graph_exit_slow
extern ftrace_graph_fast_limit
extern rb_commit_slow
extern trace_event_keys
global ftrace_caller
global ftrace_graph_caller
global ftrace_caller_end
global ftrace_return_to_handler

ftrace_caller:					; function: the sites call here
	KEY_ON trace_event_keys + TEV_FUNCTION * KEY_SIZE, .on		; the event's key
	jmp ftrace_caller_full
.on:	push rax
	push rdx
	push rcx
	MAY_WRITE .full
	or [r11 + CB_NEST], r10d		; one instruction: the level bit is ours
	mov rcx, [r11 + CB_WRITE]		; /A/ w0
	mov r10, [r11 + CB_TAIL_PAGE]		; page, read between /A/ and /C/
.stamp:	rdtsc					; /B/
	sub eax, [r11 + CB_TAIL_BASE]
	sbb edx, [r11 + CB_TAIL_BASE + 4]
	jne .slow_b				; not within 2^32 of the base
	cmp eax, RB_DELTA_LIMIT - 1
	ja .slow_b
	RESERVE FN_REC, FN_WORD, FN_ENT, rdx, edx, rcx, r10, rax, .slow, rcx
%define REC (r10 + rdx + PAGE_HEADER - FN_REC)	; the record: page + header + offset
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
	push rsi				; the graph path's layout: .restore is shared
	push rdi
	push r8
	push r9
	sub rsp, 8				; 8 words on the site's call: aligned
	mov r8, r10
	mov edx, r11d
	mov rdi, [rsp + 64]
	sub rdi, SITE_LEN
	mov rsi, [rsp + 72]
	call ftrace_function_slow
	jmp ftrace_caller.restore

.slow_commit:					; rb_commit_slow(cb)
	push rsi
.slow_commit_rsi:				; the graph path: rsi saved already
	push rdi
	push r8
	push r9
	sub rsp, 8
	mov rdi, r11
	call rb_commit_slow
.restore:
	add rsp, 8
	pop r9
	pop r8
	pop rdi
	pop rsi
	pop rcx
	pop rdx
	pop rax
	ret

ftrace_graph_caller:				; function_graph: the sites call here
	KEY_ON trace_event_keys + TEV_GRAPH_ENTRY * KEY_SIZE, .on
	jmp ftrace_caller_full
.on:	push rax
	push rdx
	push rcx
	push rsi
%define G_IP	rsp + 32			; site + 5
%define G_SLOT	rsp + 40			; the traced function's return address
	mov r10d, [gs:PC_LEVEL_BIT]		; the guard compare (recording, level
	mov r11, [gs:PC_RB]			; free: I12, I7), as MAY_WRITE's
	cmp [r11 + CB_GUARD], r10
	jae .gfull
	mov rsi, [gs:PC_GRAPH_STACK]		; st: this CPU's, this level's
	mov rcx, [rsi + ST_WORD]		; d, | busy << 32: a C hook's stack
	cmp rcx, [rel ftrace_graph_fast_limit]
	jae .gfull				; depth limit or full (G4), graph_function, no stacks, busy
%define FR(col) rsi + rcx * 8 + col		; frame d: free, ours to fill (G1)
	mov rax, [G_SLOT]
	mov [FR(ST_RET)], rax
	lea rax, [G_SLOT + 8]
	mov [FR(ST_SP)], rax
	mov rax, [G_IP]
	sub rax, SITE_LEN
	mov [FR(ST_FUNC)], rax
	or [r11 + CB_NEST], r10d		; the level bit is ours
	mov r10, [r11 + CB_WRITE]		; /A/ w0
.gstamp: rdtsc					; /B/
	shl rdx, 32
	or rax, rdx
	mov [FR(ST_CALLTIME)], rax		; the frame's stamp is the event's
	add dword [rsi + ST_DEPTH], 1		; G1: the frame, then the depth,
	mov qword [G_SLOT], ftrace_return_to_handler	; then the slot
	sub rax, [r11 + CB_TAIL_BASE]		; the delta
	cmp rax, RB_DELTA_LIMIT - 1		; unsigned 64 bits: also a clock below
	ja .gslow_b				; the base, or 2^32 past it
	mov rsi, [r11 + CB_TAIL_PAGE]		; page, read between /A/ and /C/
	RESERVE GE_REC, GE_WORD, GE_ENT, rdx, edx, r10, rsi, rax, .gslow, r10
%define GREC (rsi + rdx + PAGE_HEADER - GE_REC)
	mov rax, [G_IP]
	sub rax, SITE_LEN
	mov [GREC + 4 + GE_FUNC], rax
	mov [GREC + 4 + GE_DEPTH], ecx
	mov eax, [gs:PC_LEVEL_BIT]
	sub [r11 + CB_NEST], eax		; /F, G/ after the stores
	jne ftrace_caller.slow_commit_rsi
	pop rsi
	pop rcx
	pop rdx
	pop rax
	ret

.gfull:						; nothing changed yet: the C path
	pop rsi
	pop rcx
	pop rdx
	pop rax
	jmp ftrace_caller_full

	TO_SLOW .gslow, rdx			; pushed; the reservation's slow path:
						; ftrace_graph_entry_slow(func, d, how, w, w0)
	push rdi
	push r8
	push r9
	sub rsp, 8				; 8 words on the site's call: aligned
	mov esi, ecx
	mov rcx, rdx
	mov r8, r10
	mov edx, r11d
	mov rdi, [rsp + 64]
	sub rdi, SITE_LEN
	call ftrace_graph_entry_slow
	jmp ftrace_caller.restore

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
	mov rsi, [gs:PC_GRAPH_STACK]	; st
	mov ecx, [rsi + ST_DEPTH]	; d
%define TOP(col) rsi + rcx * 8 + col - 8	; frame d - 1
	cmp [TOP(ST_SP)], rsp		; G3: the top frame is this return's (d = 0
	jne .rfull			; reads the word: 0, never an sp)
	KEY_ON trace_event_keys + TEV_GRAPH_EXIT * KEY_SIZE, .ron
	jmp .rfull
.ron:	push rax			; E - 8: the return value,
	push rdx			; E - 16
	mov r10d, [gs:PC_LEVEL_BIT]	; the guard compare, as MAY_WRITE's
	mov r11, [gs:PC_RB]
	cmp [r11 + CB_GUARD], r10
	jae .rfull_pushed
	mov r8, [TOP(ST_RET)]		; read the frame,
	mov r9, [TOP(ST_FUNC)]
	mov rdi, [TOP(ST_CALLTIME)]
	sub ecx, 1
	mov [rsi + ST_DEPTH], ecx	; then give it back (G3); d - 1: the exit's depth
	or [r11 + CB_NEST], r10d	; the level bit is ours
	mov r10, [r11 + CB_WRITE]	; /A/ w0
	mov rsi, [r11 + CB_TAIL_PAGE]	; page, read between /A/ and /C/
.rstamp: rdtsc				; /B/
	shl rdx, 32
	or rax, rdx
	mov rdx, rax
	sub rdx, [r11 + CB_TAIL_BASE]
	sub rax, rdi			; cycles: from the entry's stamp to this one
	cmp rdx, RB_DELTA_LIMIT - 1
	ja .rslow_b
	RESERVE GX_REC, GX_WORD, GX_ENT, rdi, edi, r10, rsi, rdx, .rslow, r10
%define XREC (rsi + rdi + PAGE_HEADER - GX_REC)
	mov [XREC + 4 + GX_FUNC], r9
	mov [XREC + 4 + GX_CYCLES], rax
	mov [XREC + 4 + GX_DEPTH], ecx
	mov eax, [gs:PC_FTRACE_OVERRUN]	; this CPU's overruns, kept beside its context
	mov [XREC + 4 + GX_OVERRUN], eax
	mov edx, [gs:PC_LEVEL_BIT]
	sub [r11 + CB_NEST], edx	; /F, G/ after the stores
	jne .rcommit_slow
.rdone:					; r8: where to return
	pop rdx
	pop rax
	jmp r8

.rfull:					; nothing changed yet: ftrace_return(E)
	push rax
	push rdx
.rfull_pushed:
	lea rdi, [rsp + 16]
	call ftrace_return		; rsp E - 16: aligned
	mov r8, rax
	jmp .rdone

	TO_SLOW .rslow, rdi		; popped; the reservation's slow path:
					; ftrace_graph_exit_slow(func, cycles, d, how, w, w0)
	push r8
	sub rsp, 8			; E - 32: aligned
	mov r8, rdi
	mov rdi, r9
	mov rsi, rax
	mov edx, ecx
	mov ecx, r11d
	mov r9, r10
	call ftrace_graph_exit_slow
	jmp .rrestore

.rcommit_slow:				; rb_commit_slow(cb)
	push r8
	sub rsp, 8
	mov rdi, r11
	call rb_commit_slow
.rrestore:
	add rsp, 8
	pop r8
	jmp .rdone

; The stamp is a TSC site like the C writers' (<arch/tsc_site.h>).
section tsc_sites progbits alloc noexec nowrite align=8
	dq ftrace_caller.stamp, 2
	dq ftrace_graph_caller.gstamp, 2
	dq ftrace_return_to_handler.rstamp, 2

section .note.GNU-stack noalloc noexec nowrite progbits
