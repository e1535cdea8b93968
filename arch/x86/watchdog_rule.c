/*
 * The hard-lockup watchdog's rule: see <arch/watchdog_rule.h> for the
 * terms and R1..R5. Portable C (host-tested); runs in the x86 watchdog's
 * NMI.
 */
#include <arch/watchdog_rule.h>

void wd_begin(struct wd_cpu *w, uint64_t now)
{
	w->life = now;
	w->kick = now;
	w->probe = 0;
	w->expired = 0;
}

bool wd_touch(struct wd_cpu *w, uint64_t now, uint64_t gap)
{
	w->life = now;	/* a pending probe older than this proves nothing (R2) */
	w->expired = 0;	/* R5 */
	if (now - w->kick < gap)
		return false;
	w->kick = now;
	return true;
}

uint64_t wd_resume_expired(struct wd_cpu *w, uint64_t now, uint64_t p)
{
	w->expired = 1;
	if (now - w->kick >= p)
		return 1;	/* R5: due now */
	return w->kick + p - now;
}

enum wd_verdict wd_sample(struct wd_cpu *w, uint64_t now, uint64_t p, bool irqs_on)
{
	w->samples++;
	w->kick = now;
	if (irqs_on) {						/* R1 */
		w->life = now;
		w->expired = 0;					/* R5 */
		w->probe = 0;
		return WD_RESTART;
	}
	if (!w->probe || w->probe < w->life) {			/* R2 */
		w->probe = now ? now : 1;
		return WD_PROBE;
	}
	if (now - w->probe < p / 2)				/* R3, not yet */
		return WD_RESTART;
	return WD_STUCK;					/* R3 */
}

uint64_t wd_cycles_to_ms(uint64_t cycles, uint64_t hz)
{
	return (uint64_t)((unsigned __int128)cycles * 1000 / hz);
}

uint32_t wd_half_period_ticks(uint64_t ms, uint64_t hz)
{
	unsigned __int128 t = (unsigned __int128)ms * hz / 2000;

	if (t < 1)
		return 1;
	return t > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)t;
}
