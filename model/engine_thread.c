// SPDX-License-Identifier: MIT
/*
 * The engine's thread, and the doorbells that reach it. The thread
 * sleeps in poll() on the port, an eventfd and a timerfd whenever there
 * is nothing to do, so an idle device costs no CPU. An SQ doorbell sends
 * its packets from the thread that rang it when it can (tx_inline): no
 * thread handoff on the way out.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "engine_priv.h"
#include "ernic_time.h"

void eng_wake(struct eng *e)
{
	uint64_t one = 1;

	if (write(e->wake_fd, &one, sizeof(one)) < 0) {
		/* counter saturated: the thread is awake anyway */
	}
}

/* Set the thread's timer to `at` (eng_now's clock; 0 disarms: a zero
 * it_value). Lock held. */
static void timer_set(struct eng *e, uint64_t at)
{
	struct itimerspec its = { 0 };

	its.it_value.tv_sec = (time_t)(at / 1000000000u);
	its.it_value.tv_nsec = (long)(at % 1000000000u);
	if (!timerfd_settime(e->timer_fd, TFD_TIMER_ABSTIME, &its, NULL))
		e->timer_at = at;
}

/* Wake the thread at `at` unless it is already set to wake by then: the
 * thread may sleep without knowing of a timer that a doorbell's own
 * thread armed. Lock held. */
static void timer_arm(struct eng *e, uint64_t at)
{
	if (e->timer_at && e->timer_at <= at)
		return;
	timer_set(e, at);
}

/*
 * A deadline the timer was set for can be gone: a multi-packet message's
 * first packet starts the ACK coalescing timer (eng_ack_policy), its last
 * stops it, and each may come in a poll's pass of its own. Left set, the
 * timer woke the thread once per message for nothing, which preempted
 * the polling application (ib_send_lat 2 KiB at MTU 1024: 1.5 engine
 * wakeups per message, t_typical 28 us against 4.6 us for 1 KiB). A pass
 * that looked at every QP knows every deadline, so the timer follows it
 * off (one timerfd_settime, only when it differs); while the thread is
 * away from the port, never earlier nor later: setting a timer tens of
 * microseconds away and cancelling it again took 4-5 us each on a
 * 2-vCPU VM, where a far one takes 0.3 (the frame wire's 2 KiB
 * ib_send_lat: half its messages 20 us slower), and moving one later
 * at each round trip 11 us each (ib_write_lat). The
 * polls watch an earlier deadline themselves (poll_next: a clock read
 * per empty pass while one is set); when they stop, the thread, away
 * from the port, looks within its watch (ENG_POLL_WATCH_MAX_NS), or at
 * once when software says polling is over (eng_progress_stop).
 * Retransmission timers a doorbell's own send starts are armed as ever
 * (tx_inline).
 *
 * A timer set further away than ENG_TIMER_LAZY_NS stays as it is when
 * the deadline moved later or went: firing early only costs the thread
 * a pass, and a stream's requester otherwise paid a timerfd_settime for
 * every batch of ACKs (its oldest packet's timer moves later each time),
 * and another to arm it again after the last one (ib_send_bw -s 2: one
 * system call per sendmmsg).
 */
void eng_timer_retune(struct eng *e, uint64_t next, uint64_t now)
{
	atomic_store_explicit(&e->poll_next, next, memory_order_relaxed);
	/* Only while the thread is away: it then sleeps a watch at most and
	 * makes a pass of its own before it sleeps without one (a thread
	 * on the port may sleep with no timeout at all). Nor later: a timer
	 * that fires early costs the thread one pass, and moving it each
	 * round trip (a ping-pong's ACK kept for the reply, late_at) cost
	 * a timerfd_settime of 11 us per round trip for as long as the
	 * timer never got to fire (ib_write_lat 2 B: phases of 30-100 ms
	 * at 11 us a round trip's half instead of 5). */
	if (next && atomic_load(&e->away))
		return;
	if (e->timer_at && (!next || next > e->timer_at) &&
	    e->timer_at > now + ENG_TIMER_LAZY_NS)
		return;
	if (e->timer_at != next)
		timer_set(e, next);
}

/*
 * Run to completion: an SQ doorbell's packets leave from the thread that
 * rang it, when the engine is free, instead of after a wakeup of the
 * engine thread (which costs more than a small message's round trip).
 * Only with an engine thread on the real clock (tests that step the
 * engine or set its clock keep every packet to their steps), and only
 * for work that fits one pump; the QP's retransmission timers are handed
 * to the thread through its timerfd. Returns true when it sent
 * everything due.
 */
static bool tx_inline(struct eng *e, uint32_t i)
{
	struct eng_qp *q = &e->qp[i];
	bool done = false;

	/* QP1's MADs go through their own pump, in the thread; an awake
	 * thread sends for us at no cost (and in parallel with us). */
	if (i < ERNIC_FIRST_RC_QP || !e->running || e->m->clock ||
	    !atomic_load(&e->sleeping) || pthread_mutex_trylock(&e->lock))
		return false;
	/* Streams too: waking the thread for each doorbell cost more than
	 * the overlap with it gained (ib_send_bw -s 2 on two CPUs: 0.05 ->
	 * 0.09 M msg/s; 64 KiB bandwidth the same). */
	eng_tx_room(e);
	if ((eng_reg(e->m, ERNIC_XRNICCONF) & ERNIC_XRNICCONF_EN) &&
	    eng_qp_sync(e, i) && !eng_tx_pump(e, i)) {
		if (q->rnr_at)
			timer_arm(e, q->rnr_at);
		if (q->rto_at)
			timer_arm(e, q->rto_at);
		done = true;
	}
	/* The ACK a pass left for this reply (eng_acks_late) goes in the
	 * same send: after a WRITE, so the peer polling for the ACK finds
	 * the reply first (the pump sent it before a SEND). */
	eng_rx_acks_flush(e);
	/* The pump only queued its packets (eng_send_pkt): they leave
	 * now, while we hold the lock, or they would wait for the sleeping
	 * thread's next pass, a transport timeout away. */
	model_wire_flush(e->wire);
	pthread_mutex_unlock(&e->lock);
	return done;
}

/*
 * Run to completion on the way in: a poll that found nothing runs the
 * engine's pass in its own thread while the engine thread sleeps, so
 * that a packet waiting in the port is taken now and not after the
 * thread's wakeup. The same conditions as tx_inline; an awake thread or
 * a pass already running (another poller's) does it for us. A port with
 * nothing ends the pass after its receive half (a spinning poll costs
 * one recvmsg, not a look at every QP: doorbells and timers wake the
 * thread anyway). The pass's timers go to the thread's timerfd; work it
 * left wakes the thread.
 */
bool eng_progress(struct eng *e)
{
	uint64_t next, taken;
	bool busy;

	if (!e->running || e->m->clock || !atomic_load(&e->sleeping) ||
	    pthread_mutex_trylock(&e->pass_lock))
		return false;
	atomic_fetch_add_explicit(&e->polls, 1, memory_order_relaxed);
	taken = e->rx_taken;
	next = eng_run(e, &busy, true);
	taken = e->rx_taken - taken;
	pthread_mutex_unlock(&e->pass_lock);
	if (next) {
		pthread_mutex_lock(&e->lock);
		timer_arm(e, next);
		pthread_mutex_unlock(&e->lock);
	}
	/* A thread asleep on the port is woken by every packet the polls
	 * take, and sleeps again inside ppoll, unseen by itself: a context
	 * switch each (ib_read_lat's requester: 1 157 in 4 000 round
	 * trips). Woken once for real, it sees the polls and goes away. */
	if (busy || (taken && !atomic_load(&e->away)))
		eng_wake(e);
	return taken != 0;
}

void eng_reg_written(struct eng *e, uint32_t off, uint32_t qp)
{
	if (off == ERNIC_XRNICADCONF || off == ERNIC_CON_IO_CONF)
		eng_hndshk_global(e, off);
	if (off < ERNIC_QP_BASE || !qp || qp > ERNIC_C_NUM_QP_MAX)
		return;
	switch ((off - ERNIC_QP_BASE) % ERNIC_QP_STRIDE) {
	case ERNIC_QPCONF:
		/* Synchronous: after software disables a QP the engine
		 * must not write its queues any more. ACKs still owed are
		 * paid first, from the QP as it was (eng_acks_late). */
		pthread_mutex_lock(&e->lock);
		eng_rx_acks_send(e);
		eng_qp_sync(e, qp);
		pthread_mutex_unlock(&e->lock);
		break;
	case ERNIC_SQPI:
		if (tx_inline(e, qp))
			return;
		break;
	case ERNIC_RQCI:
		/* Received requests read RQCI themselves: the thread needs
		 * to hear of it only for one held for RQ space (Dekker with
		 * eng_rx_one's hold; software that stores RQCIi itself,
		 * ernic_model_db_word, writes it here too while rqci_watch
		 * is set). QP1's MADs are pumped by the thread. */
		atomic_thread_fence(memory_order_seq_cst);
		if (qp >= ERNIC_FIRST_RC_QP && !atomic_load(&e->holding))
			return;
		break;
	default:
		return;
	}
	/* Dekker with eng_thread_main: the thread, about to sleep, sees
	 * the QP dirty and makes another pass, or it sleeps and is seen
	 * asleep. */
	atomic_fetch_or(&e->dirty[qp / 64], UINT64_C(1) << (qp % 64));
	if (atomic_load(&e->sleeping))
		eng_wake(e);
}

static bool any_dirty(struct eng *e)
{
	for (uint32_t w = 0; w < ENG_QP_WORDS; w++)
		if (atomic_load(&e->dirty[w]))
			return true;
	return false;
}

/*
 * The IP runs beside the CPU; here it shares it with applications that
 * busy-poll (perftest spins on its CQ or buffer). The lowest real-time
 * priority lets a packet preempt a spinner at once instead of after a
 * time slice. But an engine with work all the time would, at that
 * priority, keep ordinary threads off its CPU for most of a second (RT
 * throttling gives them the last 5% of each): the applications it
 * serves and, on a busy host, the process that is another device's wire,
 * whose peers then time out with nothing lost. So an engine that kept
 * its CPU for more than ENG_RT_BUSY_PCT of a period steps aside for
 * ENG_RT_PAUSE_NS, as a NIC that is briefly slower would. Without the
 * privilege it is an ordinary thread and never pauses.
 */
#define ENG_RT_PERIOD_NS 10000000u
#define ENG_RT_PAUSE_NS 1000000u
#define ENG_RT_BUSY_PCT 95u
/* the lowest real-time priority: the thread's, but while it spins */
static const struct sched_param eng_fifo = { .sched_priority = 1 };

struct eng_rt {
	bool on;
	uint64_t start, cpu;	/* the period's start: wall clock, CPU time */
};

/* A new period of rt_govern's starts now. */
static void rt_period(struct eng_rt *rt)
{
	rt->start = ernic_clock_ns(CLOCK_MONOTONIC);
	rt->cpu = ernic_clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static void rt_govern(struct eng_rt *rt)
{
	uint64_t now = ernic_clock_ns(CLOCK_MONOTONIC), cpu;
	const struct timespec pause = { .tv_nsec = ENG_RT_PAUSE_NS };

	if (!rt->on || now - rt->start < ENG_RT_PERIOD_NS)
		return;
	cpu = ernic_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	if ((cpu - rt->cpu) * 100 > (now - rt->start) * ENG_RT_BUSY_PCT) {
		nanosleep(&pause, NULL);
		now = ernic_clock_ns(CLOCK_MONOTONIC);
	}
	rt->start = now;
	rt->cpu = cpu;
}

/*
 * Polls that run passes themselves (eng_progress) take the port's
 * packets as they arrive; a thread woken by each packet as well would
 * only preempt them and contend for the engine's locks (a third of its
 * time in ib_send_bw -s 2). So while polls keep running, the thread
 * sleeps away from the port, ENG_POLL_WATCH_NS at a time, doubled after
 * each sleep through which polls went on up to ENG_POLL_WATCH_MAX_NS
 * (each wakeup preempts a polling application on a busy machine),
 * doorbells and timers waking it as ever. It watches the port again
 * when software says its polls end (eng_progress_stop: the process's
 * CQs have nothing outstanding any more, or one is armed for an event),
 * or after a sleep in which no poll ran: what an application that just
 * stops polling costs is up to two such sleeps' delay for the packet
 * that comes after its last poll.
 */
#define ENG_POLL_WATCH_NS 200000u
#define ENG_POLL_WATCH_MAX_NS 1600000u

/*
 * A READ's responder is the IP alone: its application does not poll (it
 * may not even run), so every READ request woke the thread, which on a
 * 2-vCPU VM took about as long as the rest of the round trip. A thread
 * that has just answered a READ keeps making passes, awake, for
 * ENG_READ_SPIN_NS before it sleeps, as a NIC watches its port: a
 * requester that reads again within that time finds it awake. Only the
 * thread's own passes count (a poll that answers one has its caller's
 * thread on it). ib_read_lat 2 B, t_typical: 9.3 us against a UDP round
 * trip of 3.7-3.9; 6.2-6.5 with this and the requester's polls keeping
 * its port (eng_progress_stop), 9.3-21 with the latter alone.
 * Awake at the real-time priority, the thread would keep ordinary
 * threads off its CPU for as long as READs keep coming (the same
 * t_typical, but a t_max of 1.1 ms where the kernel's RT throttling
 * stepped in, against 60-100 us). So it stays awake as an ordinary
 * thread, which the scheduler shares out (rt_govern has nothing to
 * bound then), and takes its real-time priority back before it sleeps,
 * with rt_govern's period starting afresh (counting the time awake, it
 * would pause the thread at once).
 */
#define ENG_READ_SPIN_NS 20000u

static void spin_policy(struct eng *e, struct eng_rt *rt, bool start)
{
	static const struct sched_param other = { 0 };

	if (start)
		e->st.spins++;
	if (!rt->on)
		return;
	pthread_setschedparam(pthread_self(), start ? SCHED_OTHER : SCHED_FIFO,
			      start ? &other : &eng_fifo);
	if (!start)
		rt_period(rt);
}

/* Dekker with the thread's going away (eng_thread_main): it sees the
 * reclaim and stays, or it is seen away and woken. */
void eng_progress_stop(struct eng *e, bool armed)
{
	unsigned int reqs = atomic_load_explicit(&e->rx_reqs,
						 memory_order_relaxed);
	unsigned int before = atomic_exchange_explicit(&e->reqs_at_stop, reqs,
						       memory_order_relaxed);

	/* An ACK left for a ping-pong reply (eng_acks_late): the peer
	 * sends nothing before that reply, which a post sends and a poll
	 * then waits on. A device that took no request between this end of
	 * polling and the last one is only a requester for now (ib_read_lat,
	 * ib_write_bw's client): what comes is the answers its next polls
	 * wait for. Taking the port back would cost a wakeup per message
	 * for nothing, and the answer would wake it again. The thread
	 * still comes back within its watch if no poll runs. An
	 * application that waits for an event is not polling any more: the
	 * port goes back at once. */
	if (!armed && (atomic_load(&e->acks_late) || reqs == before)) {
		atomic_fetch_add_explicit(&e->st.port_kept, 1,
					  memory_order_relaxed);
		return;
	}
	atomic_fetch_add_explicit(&e->st.port_returned, 1,
				  memory_order_relaxed);
	atomic_store(&e->reclaim, true);
	if (atomic_load(&e->away))
		eng_wake(e);
}

/* Whether the thread may sleep away from the port: polls ran since
 * `seen`, and no reclaim; e->away tells eng_progress_stop so. */
static bool go_away(struct eng *e, unsigned int *seen)
{
	unsigned int polls = atomic_load(&e->polls);

	if (polls == *seen)
		return false;
	*seen = polls;
	atomic_store(&e->away, true);
	if (!atomic_exchange(&e->reclaim, false))
		return true;
	atomic_store(&e->away, false);
	return false;
}

/* The thread's next deadline: `next`, or earlier the one of an ACK a
 * pass left for a reply (eng_acks_late), which the thread pays if no
 * post did by then. A poll's pass that leaves one while the thread
 * sleeps away does not wake it: the polls pay it, or the thread within
 * its watch. */
static uint64_t late_next(struct eng *e, uint64_t next)
{
	uint64_t at;

	if (!atomic_load(&e->acks_late))
		return next;
	pthread_mutex_lock(&e->lock);
	at = atomic_load(&e->acks_late) ? e->late_at : 0;
	pthread_mutex_unlock(&e->lock);
	return at && (!next || at < next) ? at : next;
}

/* ppoll's timeout for a deadline `next` (0: none), at most `cap` ns
 * away (0: no cap); NULL for no timeout. */
static struct timespec *sleep_for(struct eng *e, uint64_t next, uint64_t cap,
				  struct timespec *ts)
{
	uint64_t d;

	if (next) {
		uint64_t now = eng_now(e);

		d = next > now ? next - now : 0;
		if (cap && d > cap)
			d = cap;
	} else if (cap) {
		d = cap;
	} else {
		return NULL;
	}
	ts->tv_sec = (time_t)(d / 1000000000u);
	ts->tv_nsec = (long)(d % 1000000000u);
	return ts;
}

void eng_print_stats(struct eng *e)
{
	fprintf(stderr,
		"ernic engine %s: thread switched out %" PRIu64
		" times, woke %" PRIu64 " times, ran %" PRIu64
		" passes, stayed awake after a READ %" PRIu64
		" times; polls ran %u; ACKs held for a reply %" PRIu64
		" (paid at the deadline %" PRIu64 "); polls' ends: port back "
		"to the thread %u, left to the polls %u; requests held for RQ "
		"space %" PRIu64 " (with a membarrier %" PRIu64 ")\n",
		e->st.name, e->st.switches, e->st.wakeups, e->st.passes,
		e->st.spins,
		atomic_load(&e->polls),
		e->st.acks_held, e->st.acks_overdue,
		atomic_load(&e->st.port_returned),
		atomic_load(&e->st.port_kept),
		e->st.holds, e->st.hold_barriers);
}

void *eng_thread_main(void *arg)
{
	struct eng *e = arg;
	struct eng_rt rt;
	unsigned int seen = atomic_load(&e->polls);
	uint64_t next = 0, watch = ENG_POLL_WATCH_NS, spin_until = 0;
	struct rusage ru;
	bool pass = true;

	/* named for top, perf and gdb (a failure costs only the name) */
	pthread_setname_np(pthread_self(), "ernic-engine");
	rt_period(&rt);
	rt.on = !pthread_setschedparam(pthread_self(), SCHED_FIFO, &eng_fifo);
	while (!atomic_load(&e->stop)) {
		struct pollfd pfd[3] = {
			{ .fd = model_wire_fd(e->wire), .events = POLLIN },
			{ .fd = e->wake_fd, .events = POLLIN },
			{ .fd = e->timer_fd, .events = POLLIN },
		};
		struct timespec ts, *tsp;
		bool busy, away;
		int n = 1;

		if (pass) {
			bool served;

			e->st.passes++;
			if (!spin_until)
				rt_govern(&rt);
			pthread_mutex_lock(&e->pass_lock);
			e->read_served = false;
			next = eng_run_once(e, &busy);
			served = e->read_served;
			pthread_mutex_unlock(&e->pass_lock);
			if (served) {
				if (!spin_until)
					spin_policy(e, &rt, true);
				spin_until = eng_now(e) + ENG_READ_SPIN_NS;
			}
			if (busy)
				continue;
		}
		if (spin_until) {
			if (eng_now(e) < spin_until && !atomic_load(&e->stop)) {
				pass = true;
				continue;
			}
			spin_until = 0;
			spin_policy(e, &rt, false);
		}
		/* Polls ran since the last look: the port is theirs (a
		 * negative fd is one ppoll ignores). */
		away = go_away(e, &seen);
		if (away)
			pfd[0].fd = -1;
		tsp = sleep_for(e, late_next(e, next), away ? watch : 0, &ts);
		/* Dekker with eng_reg_written: announce sleep, then look. */
		atomic_store(&e->sleeping, 1);
		if (!any_dirty(e) && !atomic_load(&e->stop)) {
			n = ppoll(pfd, 3, tsp, NULL);
			e->st.wakeups++;
		}
		atomic_store(&e->sleeping, 0);
		if (away)
			atomic_store(&e->away, false);
		if (pfd[2].revents & POLLIN) {
			uint64_t v;

			/* The pass after this one sees every timer. */
			if (read(e->timer_fd, &v, sizeof(v)) < 0) {
				/* EAGAIN: re-armed for later meanwhile */
			}
			pthread_mutex_lock(&e->lock);
			e->timer_at = 0;
			pthread_mutex_unlock(&e->lock);
		}
		if (pfd[1].revents & POLLIN) {
			uint64_t v;

			if (read(e->wake_fd, &v, sizeof(v)) < 0) {
				/* EAGAIN: another wake consumed it */
			}
		}
		/* Polls that ended: only those after this count. A sleep
		 * away from the port that only timed out while polls went
		 * on: nothing for a pass, unless its own timer is due. */
		if (atomic_exchange(&e->reclaim, false)) {
			seen = atomic_load(&e->polls);
			pass = true;
			watch = ENG_POLL_WATCH_NS;
		} else {
			bool polled_on = away && n == 0 &&
					 atomic_load(&e->polls) != seen;

			/* (an ACK left for a reply: eng_acks_late) */
			pass = atomic_load(&e->acks_late) ||
			       !(polled_on && (!next || eng_now(e) < next));
			watch = !polled_on ? ENG_POLL_WATCH_NS :
				watch < ENG_POLL_WATCH_MAX_NS / 2 ? 2 * watch :
				ENG_POLL_WATCH_MAX_NS;
		}
	}
	/* every sleep, including those a poll's recvmsg ended before the
	 * thread ran (ppoll then sleeps again without returning) */
	if (!getrusage(RUSAGE_THREAD, &ru))
		e->st.switches = (uint64_t)ru.ru_nvcsw + (uint64_t)ru.ru_nivcsw;
	return NULL;
}
