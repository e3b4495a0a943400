// SPDX-License-Identifier: GPL-2.0
/*
 * Track names: processes, threads, synthetic tracks (builder.h "Tracks"). See bthread.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "stack/bthread.h"
#include "util/vec.h"

static void fmt_id(char *buf, size_t size, int32_t id)
{
	if (id == 0 || id == -1)
		snprintf(buf, size, "?");
	else
		snprintf(buf, size, "%" PRId32, id);
}

/* The process's first comm (see pid_cmd), 0 if none yet. */
static uint32_t pid_first_comm(const struct snap_builder *bld, int32_t pid)
{
	uint64_t v = 0;

	snap_u64map_get(&bld->pidcomm, (uint32_t)pid, &v);
	return (uint32_t)v;
}

/* The process's first comm changed (see pid_cmd): the threads of pid seen so
 * far are named again from it. */
static int pid_renamed(struct snap_builder *bld, int32_t pid)
{
	uint64_t cmd;
	uint32_t proc, tname;
	int err;

	for (size_t i = 0; i < bld->nth; i++) {
		struct snap_bthread *th = bld->th[i];

		if (th->pid != pid)
			continue;
		if ((err = snap_tracks_proc_name(bld, pid, th->tid, 0, &proc, &cmd)) < 0 ||
		    (err = snap_tracks_thread_name(bld, pid, th->tid, th->comm, cmd, &tname)) < 0)
			return err;
		if (proc == th->proc_name && tname == th->tname)
			continue;
		th->proc_name = proc;
		th->tname = tname;
		bld->stats.renames++;
		if ((err = bld->tl->ops->thread(bld->tl, pid, th->tid, proc, tname)) < 0)
			return err;
	}
	return 0;
}

/*
 * The command of a process: the opts name, else its first comm, else 0. The
 * first comm is the main thread's (tid == pid) first one: a thread a program
 * named (pthread_setname_np) may be seen before its main thread, and its comm
 * must not pass for the process's. Until the main thread is seen, the first
 * comm of any thread stands in for it (remembered with bit 32 clear); when
 * the main thread's differs, the threads seen so far are named again.
 */
static int pid_cmd(struct snap_builder *bld, int32_t pid, int32_t tid, uint32_t comm, uint64_t *cmd)
{
	uint64_t first = 0, main = (uint64_t)(tid == pid) << 32;
	int known = snap_u64map_get(&bld->pidcomm, (uint32_t)pid, &first);

	*cmd = 0;
	if (comm && (!known || (main && !(first >> 32)))) {
		int changed = known && (uint32_t)first != comm;

		if (snap_u64map_put(&bld->pidcomm, (uint32_t)pid, comm | main) < 0)
			return -ENOMEM;
		first = comm;
		if (changed) {
			int err = pid_renamed(bld, pid);

			if (err < 0)
				return err;
		}
	}
	if (!snap_u64map_get(&bld->pidnames, (uint32_t)pid, cmd))
		*cmd = (uint32_t)first;
	return 0;
}

/* "NAME [pid=P] [tid=T]" for a thread whose comm is comm (0 = unknown): NAME
 * is the comm, except that a thread still called by its process's first comm
 * (or by none) is named like its process (the opts name: a full command line
 * says more than a 15-byte comm). */
int snap_tracks_thread_name(struct snap_builder *bld, int32_t pid, int32_t tid, uint32_t comm,
			    uint64_t cmd, uint32_t *id)
{
	char buf[512], pbuf[16], tbuf[16];
	uint64_t named;
	uint32_t first = pid_first_comm(bld, pid);

	if (comm && (comm != first || !snap_u64map_get(&bld->pidnames, (uint32_t)pid, &named)))
		cmd = comm;
	fmt_id(pbuf, sizeof(pbuf), pid);
	fmt_id(tbuf, sizeof(tbuf), tid);
	if (cmd)
		snprintf(buf, sizeof(buf), "%.300s [pid=%s] [tid=%s]",
			 snap_strtab_get(bld->st, (uint32_t)cmd), pbuf, tbuf);
	else
		snprintf(buf, sizeof(buf), "[pid=%s] [tid=%s]", pbuf, tbuf);
	return snap_strtab_intern_id(bld->st, buf, id);
}

/* The thread's comm changed (pthread_setname_np, prctl, exec): its track is
 * named again (FXT lets a thread's kernel object record be written again). */
int snap_tracks_rename(struct snap_builder *bld, struct snap_bthread *th, uint32_t comm)
{
	uint64_t cmd;
	uint32_t tname;
	int err;

	th->comm = comm;
	if ((err = pid_cmd(bld, th->pid, th->tid, comm, &cmd)) < 0 ||
	    (err = snap_tracks_thread_name(bld, th->pid, th->tid, comm, cmd, &tname)) < 0)
		return err;
	if (tname == th->tname)
		return 0;
	th->tname = tname;
	bld->stats.renames++;
	return bld->tl->ops->thread(bld->tl, th->pid, th->tid, th->proc_name, tname);
}

/* "CMD [pid=P]" for pid (comm: of the event that needs it, may be 0); *cmd
 * receives CMD (0 if none). */
int snap_tracks_proc_name(struct snap_builder *bld, int32_t pid, int32_t tid, uint32_t comm,
			  uint32_t *id, uint64_t *cmd)
{
	char buf[384], p[16];
	int err = pid_cmd(bld, pid, tid, comm, cmd);

	if (err < 0)
		return err;
	fmt_id(p, sizeof(p), pid);
	if (*cmd)
		snprintf(buf, sizeof(buf), "%.300s [pid=%s]",
			 snap_strtab_get(bld->st, (uint32_t)*cmd), p);
	else
		snprintf(buf, sizeof(buf), "[pid=%s]", p);
	return snap_strtab_intern_id(bld->st, buf, id);
}

/* A new synthetic track of pid named name (strtab id); *tid receives its tid. */
int snap_tracks_synth(struct snap_builder *bld, int32_t pid, uint32_t proc, uint32_t name,
		      int32_t *tid)
{
	*tid = (int32_t)(SNAP_BUILDER_SYNTH_TID | bld->next_synth++);
	return bld->tl->ops->thread(bld->tl, pid, *tid, proc, name);
}

int snap_tracks_extra(struct snap_builder *bld, struct snap_bthread *th, uint32_t event,
		      int32_t *tid)
{
	char buf[384], tbuf[16];
	uint32_t name;
	size_t i;
	int err;

	for (i = 0; i < th->nextra; i++) {
		if (th->extra[i].event == event) {
			*tid = th->extra[i].tid;
			return 0;
		}
	}
	if (snap_vec_reserve(&th->extra, &th->capextra, th->nextra + 1, sizeof(*th->extra)) < 0)
		return -ENOMEM;
	fmt_id(tbuf, sizeof(tbuf), th->tid);
	snprintf(buf, sizeof(buf), "%.300s (tid %s)",
		 event ? snap_strtab_get(bld->st, event) : "event", tbuf);
	if ((err = snap_strtab_intern_id(bld->st, buf, &name)) < 0)
		return err;
	th->extra[th->nextra].event = event;
	err = snap_tracks_synth(bld, th->pid, th->proc_name, name, &th->extra[th->nextra].tid);
	*tid = th->extra[th->nextra++].tid;
	return err;
}
