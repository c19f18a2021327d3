/*
 * GenMC model of Redo-PTM's seqlock-validated copy of the tail State.
 *
 * Models:
 *   impl/perdure-ptm/src/redo/state.rs, `State::copy_from` (cpySt, Algorithm 3 L12, step {3}): the
 *     ticket is stored SeqCst, then fence(Release), then `applied[]` and `results[]` are copied
 *     with Relaxed loads and stores;
 *   impl/perdure-ptm/src/redo/update.rs, `attempt_update` steps {2}-{3}: a thread that read
 *     `tail` copies `tail_st` with `copy_from` (Relaxed loads), then fence(Acquire), then checks
 *     that `tail_st.ticket` (Relaxed) is still `tail` before it trusts the copy.
 *
 * The weak-memory bug loom found (tests/loom_redo_consensus.rs) was this reader without its
 * acquire fence: the relaxed loads may see the owner's reuse of the State while the ticket load
 * still returns the old ticket, and the copy pairs a new `applied` with an old `result`.
 *
 * Client (2 threads; the State has two thread slots, as with two threads):
 *   owner   reuses the State `tail_st` (ticket T1 -> T2) by copy_from of a State holding
 *           (applied, results) = (2, 20) in every slot; `tail_st` held (1, 10) under T1;
 *   copier  copy_from(T_new, tail_st) into its own State, then the validation of attempt_update.
 * DEEP (DEPTH=deep): the owner reuses the State twice (T1 -> T2 -> T3).
 *
 * Invariant: a copy that passes the validation holds, in every slot, a pair
 * (applied, results) that `tail_st` held together under T1: results == 10 * applied == 10.
 *
 * Mutants (each must be reported as a violation where `violates=` says, and pass elsewhere):
 *   MUTANT_NO_ACQUIRE_FENCE   the copier's fence(Acquire) removed (the code before loom's finding):
 *                             violated under RC11 and IMM; TSO keeps loads in order, so it passes.
 *   MUTANT_TICKET_AFTER_COPY  copy_from stores the ticket after the copied words: the ticket no
 *                             longer announces the reuse, violated under every model.
 *
 * genmc-row: redo-state-copy
 * genmc-row: redo-state-copy-mutant-no-acquire-fence -DMUTANT_NO_ACQUIRE_FENCE violates=rc11,imm
 * genmc-row: redo-state-copy-mutant-ticket-after-copy -DMUTANT_TICKET_AFTER_COPY violates=rc11,imm,tso
 */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#define SC memory_order_seq_cst
#define ACQ memory_order_acquire
#define REL memory_order_release
#define RLX memory_order_relaxed

#define THREADS 2
#define T1 11UL
#define T2 12UL
#define T3 13UL
#define T_COPY 21UL

struct state {
	atomic_ulong ticket;
	atomic_ulong applied[THREADS];
	atomic_ulong results[THREADS];
};

struct state tail_st;   /* the State cur_comb's head designates: ticket T1, (1, 10) */
struct state newer;     /* the State its owner copies from on reuse: (2, 20) */
struct state newest;    /* DEEP: the second reuse: (3, 30) */
struct state mine;      /* the copier's own new State */

/* state.rs: State::copy_from */
void copy_from(struct state *self, uint64_t ticket, struct state *from)
{
#ifndef MUTANT_TICKET_AFTER_COPY
	atomic_store_explicit(&self->ticket, ticket, SC); /* rust: copy_from store SeqCst */
	atomic_thread_fence(REL);                         /* rust: copy_from fence Release */
#endif
	for (int i = 0; i < THREADS; i++) {
		uint64_t a = atomic_load_explicit(&from->applied[i], RLX); /* rust: copy_from load Relaxed */
		atomic_store_explicit(&self->applied[i], a, RLX);          /* rust: copy_from store Relaxed */
	}
	for (int i = 0; i < THREADS; i++) {
		uint64_t r = atomic_load_explicit(&from->results[i], RLX); /* rust: copy_from load Relaxed */
		atomic_store_explicit(&self->results[i], r, RLX);          /* rust: copy_from store Relaxed */
	}
#ifdef MUTANT_TICKET_AFTER_COPY
	atomic_store_explicit(&self->ticket, ticket, SC);
	atomic_thread_fence(REL);
#endif
	/* log_start, log_len: Relaxed stores the validation does not read (not modelled) */
}

void *owner(void *arg)
{
	copy_from(&tail_st, T2, &newer);
#ifdef DEEP
	copy_from(&tail_st, T3, &newest);
#endif
	return NULL;
}

void *copier(void *arg)
{
	/* update.rs: attempt_update {3} then the validation */
	copy_from(&mine, T_COPY, &tail_st);
#ifndef MUTANT_NO_ACQUIRE_FENCE
	atomic_thread_fence(ACQ); /* rust: attempt_update fence Acquire */
#endif
	if (atomic_load_explicit(&tail_st.ticket, RLX) != T1) /* rust: attempt_update load Relaxed */
		return NULL; /* the State was reused: attempt_update retries */
	/* (the re-check of cur_comb, SeqCst, only adds a reason to retry; not modelled) */
	for (int i = 0; i < THREADS; i++) {
		uint64_t a = atomic_load_explicit(&mine.applied[i], RLX);
		uint64_t r = atomic_load_explicit(&mine.results[i], RLX);
		assert(a == 1 && r == 10 && "a validated copy holds a pair tail_st never held under T1");
	}
	return NULL;
}

int main(void)
{
	atomic_init(&tail_st.ticket, T1);
	for (int i = 0; i < THREADS; i++) {
		atomic_init(&tail_st.applied[i], 1);
		atomic_init(&tail_st.results[i], 10);
		atomic_init(&newer.applied[i], 2);
		atomic_init(&newer.results[i], 20);
		atomic_init(&newest.applied[i], 3);
		atomic_init(&newest.results[i], 30);
	}
	pthread_t o, c;
	pthread_create(&o, NULL, owner, NULL);
	pthread_create(&c, NULL, copier, NULL);
	pthread_join(o, NULL);
	pthread_join(c, NULL);
	return 0;
}
