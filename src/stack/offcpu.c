// SPDX-License-Identifier: GPL-2.0
/*
 * Sampled threads: samples, context switches, off-CPU and unsampled slices,
 * inferred idle gaps (docs/sampling.md "Off-CPU time"). See bthread.h.
 */
#include "stack/bthread.h"

/* The thread is back on the CPU (or a sample shows it running): its
 * off-CPU slice ends at t (if it is still open: a snapshot boundary or the
 * end of a segment may have closed it). */
int snap_offcpu_on_cpu(struct snap_bthread *th, uint64_t t)
{
	int err = 0;

	if (th->offcpu == OFFCPU_SLICE) {
		if ((err = snap_cstack_flush_to(&th->cs, t)) < 0)
			return err;
		if (snap_cstack_top_is(&th->cs, th->offcpu_sym, 0))
			err = snap_cstack_pop_now(&th->cs, t);
	}
	th->offcpu = OFFCPU_NO;
	return err;
}

/* Ends the open frames beyond depth d at t. */
static int pop_to(struct snap_bthread *th, size_t d, uint64_t t)
{
	size_t n;
	int err;

	if ((err = snap_cstack_flush_to(&th->cs, t)) < 0)
		return err;
	for (n = snap_cstack_depth(&th->cs); n > d; n--)
		if ((err = snap_cstack_pop_now(&th->cs, t)) < 0)
			return err;
	if (th->sd.n > d)
		th->sd.n = d;
	return 0;
}

/* A slice named sym over [t0, t1] on top of the open frames (none when the
 * depth cap is reached). Returns 1 if written, 0 if capped, or an error. */
static int marker(struct snap_bthread *th, uint32_t sym, uint64_t t0, uint64_t t1)
{
	int dropped, err = snap_cstack_push_now(&th->cs, 0, sym, t0, &dropped);

	if (err < 0 || dropped)
		return err;
	err = snap_cstack_pop_now(&th->cs, t1);
	return err < 0 ? err : 1;
}

/* Applies a chain (a sample's, or a sched_switch chain) at t, marking the
 * begins inferred_start_time while the thread's first frames are cut. */
static int apply_chain(struct snap_builder *bld, struct snap_bthread *th,
		       const struct snap_event *ev, uint64_t t, struct snap_sampdiff_stats *st)
{
	int err = snap_sampdiff_apply(&th->cs, &th->sd, ev->frames, ev->frames ? ev->nframes : 0,
				      snap_bld_keep(bld), t, st);

	th->cs.start_cut = 0;
	return err;
}

/* The off-CPU slice opens at t on top of the open frames: "[off-CPU: preempted]"
 * (still runnable) or "[off-CPU]" (blocked; chain: the open frames are the
 * chain it blocked in). */
int snap_offcpu_open(struct snap_builder *bld, struct snap_bthread *th, int preempt, int chain,
		     uint64_t t)
{
	uint32_t sym = preempt ? bld->n_preempted : bld->n_offcpu;
	int dropped, err;

	if (t < th->floor)
		t = th->floor;
	th->out_pend = 0;
	th->blk_leaf = (uint8_t)(chain && !preempt);
	if ((err = snap_cstack_flush_to(&th->cs, t)) < 0 ||
	    (err = snap_cstack_push_now(&th->cs, 0, sym, t, &dropped)) < 0)
		return err;
	th->offcpu = dropped ? OFFCPU_CAPPED : OFFCPU_SLICE;
	th->offcpu_sym = sym;
	bld->stats.offcpu_slices += !dropped && !preempt;
	bld->stats.preempted_slices += !dropped && preempt;
	return 0;
}

/* The thread ran from its switch-in (th->t_in) to t, a switch-out, and no
 * sample showed what ran (docs/sampling.md): the open frames that the
 * switch-out chain (frames[0..n), none: nothing is known; keep_all: a
 * preemption without chain, where the open frames may go on) continues stay,
 * except the frame it blocked in before, which returned to run the burst as
 * far as anyone knows; the others end at t_in, and "[on-CPU: unsampled]"
 * covers [t_in, t] under the frames that stay. */
int snap_offcpu_unsampled(struct snap_builder *bld, struct snap_bthread *th,
			  const struct snap_event *ev, int keep_all, uint64_t t)
{
	size_t depth, d = 0;
	int err;

	th->pend_in = 0;
	if (th->t_in < th->floor)
		th->t_in = th->floor;
	depth = snap_cstack_depth(&th->cs);
	if (keep_all)
		d = depth;
	else if (ev->frames && ev->nframes)
		d = snap_sampdiff_common(&th->cs, &th->sd, ev->frames, ev->nframes,
					 snap_bld_keep(bld));
	if (th->blk_leaf && d == depth && d)
		d--;
	th->blk_leaf = 0;
	if ((err = pop_to(th, d, th->t_in)) < 0)
		return err;
	if (t <= th->t_in)
		return 0;
	if ((err = marker(th, bld->n_unsampled, th->t_in, t)) < 0)
		return err;
	bld->stats.unsampled += (uint64_t)err;
	bld->stats.unsampled_ns += (t - th->t_in) * (uint64_t)err;
	return 0;
}

/* A context switch (docs/sampling.md "Off-CPU time"). Out: a sched:sched_switch
 * sample's chain is applied (the frames not in it end) and the off-CPU slice
 * waits for the switch record after it, which says whether the thread was
 * preempted; a switch record alone opens "[off-CPU: preempted]" on top of the
 * last sampled stack (stopped wherever it was), or, when it blocked somewhere
 * the last sample does not show, ends every frame and opens "[off-CPU]". A
 * burst since the last switch-in that no sample saw becomes
 * "[on-CPU: unsampled]" first. In: the off-CPU slice ends; the next sample
 * says what ran since (sample path in apply). */
int snap_offcpu_switch(struct snap_builder *bld, struct snap_bthread *th,
		       const struct snap_event *ev, uint64_t t)
{
	int err, was_off = th->offcpu != OFFCPU_NO;

	if (th->exited) {
		bld->stats.switches_ignored++; /* its last switch-out, after the exit */
		return 0;
	}
	th->last_was_sample = 0;
	if (!ev->sw_out) {
		bld->stats.switches_in += was_off;
		if (!was_off)
			return 0;
		if ((err = snap_offcpu_on_cpu(th, t)) < 0)
			return err;
		th->pend_in = 1;
		th->t_in = t;
		return 0;
	}
	if (!ev->nframes && th->out_pend) { /* the record after a sched_switch chain */
		bld->stats.preempted += ev->sw_preempt;
		return snap_offcpu_open(bld, th, ev->sw_preempt, 1, th->out_t);
	}
	if (!ev->nframes && was_off)
		return 0; /* already off the CPU */
	bld->stats.switches_out += !was_off;
	bld->stats.switch_chains += ev->nframes != 0;
	if (was_off) {
		/* a chain while off (a sched_switch chain without a switch-in record
		 * before it): the off-CPU slice ends here */
		if ((err = snap_offcpu_on_cpu(th, t)) < 0)
			return err;
	} else if (th->pend_in && (err = snap_offcpu_unsampled(
					   bld, th, ev, !ev->nframes && ev->sw_preempt, t)) < 0) {
		return err;
	}
	th->pend_in = 0;
	if (ev->nframes) {
		if ((err = apply_chain(bld, th, ev, t, NULL)) < 0)
			return err;
		th->out_pend = 1;
		th->out_t = t;
		return 0;
	}
	bld->stats.preempted += ev->sw_preempt;
	if (!ev->sw_preempt && (err = pop_to(th, 0, t)) < 0)
		return err;
	return snap_offcpu_open(bld, th, ev->sw_preempt, 0, t);
}

/* A plain `perf record -g` (no switch records in the trace): a gap of more
 * than SNAP_BUILDER_GAP_PERIODS periods between two clock samples of a
 * thread is time off the CPU (docs/sampling.md "Idle gaps"). The previous
 * sample's frames that the new sample does not continue (and its leaf) end
 * half a period after it, "[off-CPU: inferred]" covers the rest but the half
 * period before the new sample, where the new sample applies. Returns the
 * time to apply the sample at. */
static int idle_gap(struct snap_builder *bld, struct snap_bthread *th, const struct snap_event *ev,
		    uint64_t t, uint64_t *at)
{
	uint64_t p = ev->period, prev = th->last_sample, t0, t1;
	size_t depth, d;
	int err;

	*at = t;
	if (bld->saw_switch || !th->nsamples || !th->last_was_sample || !p ||
	    !snap_bld_clock_event(bld, ev->event) || t < prev ||
	    t - prev <= SNAP_BUILDER_GAP_PERIODS * p)
		return 0;
	t0 = prev + p / 2 > th->floor ? prev + p / 2 : th->floor;
	t1 = t - p / 2 > t0 ? t - p / 2 : t0;
	depth = snap_cstack_depth(&th->cs);
	d = snap_sampdiff_common(&th->cs, &th->sd, ev->frames, ev->frames ? ev->nframes : 0,
				 snap_bld_keep(bld));
	if (d == depth && d)
		d--; /* the previous leaf was running, not waiting */
	if ((err = pop_to(th, d, t0)) < 0 || (err = marker(th, bld->n_off_inferred, t0, t1)) < 0)
		return err;
	bld->stats.gaps_inferred++;
	bld->stats.gap_ns += t1 - t0;
	*at = t1;
	return 0;
}

/* A stack sample at t (docs/sampling.md): after a switch-in, the time since
 * it goes to this sample's stack (perf credits a sample's period to its
 * stack), so the sample applies at the switch-in time. */
int snap_offcpu_sample(struct snap_builder *bld, struct snap_bthread *th,
		       const struct snap_event *ev, uint64_t t)
{
	uint64_t at = t;
	int err;

	if ((err = idle_gap(bld, th, ev, t, &at)) < 0)
		return err;
	if (th->offcpu != OFFCPU_NO) {
		if ((err = snap_offcpu_on_cpu(th, t)) < 0)
			return err; /* no switch-in recorded: off until this sample */
	} else if (th->pend_in && th->t_in <= t) {
		at = th->t_in > th->floor ? th->t_in : th->floor;
	}
	th->pend_in = 0;
	th->blk_leaf = 0;
	th->exited = 0;
	if (!th->nsamples++)
		th->first_sample = t;
	th->last_sample = t;
	th->last_was_sample = 1;
	th->period_sum += ev->period;
	th->sample_event = ev->event;
	th->last_period = snap_bld_clock_event(bld, ev->event) ? ev->period : 0;
	if ((err = apply_chain(bld, th, ev, at, &bld->sd)) < 0)
		return err;
	/* perf's estimator: the sample's period goes to its leaf (docs/sampling.md) */
	if (th->last_period)
		snap_cstack_credit(&th->cs, th->last_period);
	return 0;
}

/* Where a sampled thread's last frames end: half a period after its last
 * sample (docs/sampling.md), no later than limit (0: none) and no earlier
 * than its last event. */
uint64_t snap_offcpu_last_end(const struct snap_bthread *th, uint64_t limit)
{
	uint64_t t = th->cs.last_event_time;

	if (th->last_was_sample && th->offcpu == OFFCPU_NO && th->last_period) {
		uint64_t e = th->last_sample + th->last_period / 2;

		if (limit && e > limit)
			e = limit;
		if (e > t)
			t = e;
	}
	if (limit && limit > t && !th->last_was_sample)
		t = limit;
	return t;
}
