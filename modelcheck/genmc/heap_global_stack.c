/*
 * GenMC model of the persistent heap's lock-free global stacks of completed free sets (Treiber
 * stacks with ABA tags).
 *
 * Models: impl/perdure-pm/src/heap.rs: `HeapThread::pop_global` (head Acquire, the set's link by
 * `load`, CAS AcqRel/Acquire to (next, tag + 1)) and `donate` (off the slot's own stack, then the
 * link stored by `store`, CAS AcqRel/Acquire to (set, tag + 1)), with `HeapThread::load` (Acquire)
 * and `HeapThread::store` (Release) for the words they touch. Not modelled: persistence (every
 * pwb and pfence), `valid_set`'s range check, the slot's set count, the blocks of a set beyond
 * one payload word, which is a plain variable here (written before the set is pushed, read after
 * it is popped: GenMC reports a race if the stack does not order the two).
 *
 * Client (CI: 3 threads; the global stack holds A -> B):
 *   2 poppers  each pops one set and reads its payload;
 *   cycler     pops two sets, writes a new payload into the first and donates it back (the ABA
 *              shape: a popper may have read A and A's link B before the cycler's pops and push).
 * DEEP: a second cycler (pops one set, refills it, donates it back).
 * Invariants: a popped set's payload is the one written before its last push (no race, no stale
 * read); after the joins every set is exactly once either in a thread's hands or on the stack.
 *
 * Mutants (each must be reported as a violation):
 *   MUTANT_NO_TAG   the CASes keep the tag: the popper's CAS succeeds on the recycled A with its
 *                   stale link, and B is handed out twice (every model).
 *
 * Ordering mutants (tools/genmc-weaken.py, RC11): 3 of 10 caught: pop_global's load of the head
 * without acquire (it reads a stale link of the set the head names: a set handed out twice),
 * pop_global's CAS without acquire and donate's CAS without release (each a race on the
 * payload). Survivors:
 *   - `load` Acquire -> Relaxed (a set's link, the slot's own head): the link is read after an
 *     acquire read of the head that names the set, whose push stored the link first, so
 *     coherence already makes the link load see that store; the own head is the slot's alone;
 *   - `store` Release -> Relaxed: the link is published by donate's release CAS after it, the
 *     own head is the slot's alone;
 *   - pop_global's CAS AcqRel -> Acquire: a pop publishes nothing (the popper's later writes to
 *     the set reach the next popper through its donate's release);
 *   - donate's CAS AcqRel -> Release and its load of the head Acquire -> Relaxed: a pusher reads
 *     the head only for the value it links below its set, which its CAS re-validates;
 *   - both CASes' failure ordering Acquire -> Relaxed: GenMC v0.11 gives a failed
 *     compare-exchange its success ordering (AcqRel here), so these two are not evidence either
 *     way (see the README); the same weakening of pop_global's first load of the head is caught.
 *
 * genmc-row: heap-global-stack
 * genmc-row: heap-global-stack-mutant-no-tag -DMUTANT_NO_TAG violates=rc11,imm,tso
 */
#include <assert.h>
#include <genmc.h> /* __VERIFIER_assume */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#define ACQ memory_order_acquire
#define REL memory_order_release
#define ACQ_REL memory_order_acq_rel
#define RLX memory_order_relaxed

#define SET_SHIFT 9
#define TAG_SHIFT 41
#define SET_MASK ((1ULL << TAG_SHIFT) - 1)
#define NSETS 3      /* sets 1 (A), 2 (B); 0 is null */
#define ROUNDS 4

static atomic_ulong global_head;        /* (set >> SET_SHIFT) | tag << TAG_SHIFT */
static atomic_ulong link_of[NSETS];      /* a set's first word: the next set's offset */
static int payload[NSETS];               /* plain: the set's blocks */
static atomic_ulong own_head[3];         /* each slot's own stack of completed sets (W_HEAD) */

static inline uint64_t off_of(int s) { return (uint64_t)s << SET_SHIFT; }
static inline int set_at(uint64_t off) { return (int)(off >> SET_SHIFT); }

/* HeapThread::load / store on the words of a set or of the slot */
static uint64_t load(atomic_ulong *w) { return atomic_load_explicit(w, ACQ); /* rust: load load Acquire */ }
static void store(atomic_ulong *w, uint64_t v) { atomic_store_explicit(w, v, REL); /* rust: store store Release */ }

static int pop_global(void)
{
	uint64_t h = atomic_load_explicit(&global_head, ACQ); /* rust: pop_global load Acquire */
	for (int r = 0;; r++) {
		__VERIFIER_assume(r < ROUNDS);
		uint64_t t = (h & SET_MASK) << SET_SHIFT;
		if (t == 0)
			return 0;
		uint64_t next = load(&link_of[set_at(t)]);
#ifdef MUTANT_NO_TAG
		uint64_t tag = h >> TAG_SHIFT;
#else
		uint64_t tag = (h >> TAG_SHIFT) + 1;
#endif
		uint64_t new = ((next >> SET_SHIFT) & SET_MASK) | (tag << TAG_SHIFT);
		if (atomic_compare_exchange_strong_explicit(&global_head, &h, new, ACQ_REL, ACQ)) /* rust: pop_global compare_exchange AcqRel Acquire */
			return set_at(t);
	}
}

static void donate(int slot)
{
	uint64_t set = load(&own_head[slot]);
	if (set == 0)
		return;
	/* Off the own stack first. */
	store(&own_head[slot], load(&link_of[set_at(set)]));
	uint64_t h = atomic_load_explicit(&global_head, ACQ); /* rust: donate load Acquire */
	for (int r = 0;; r++) {
		__VERIFIER_assume(r < ROUNDS);
		store(&link_of[set_at(set)], (h & SET_MASK) << SET_SHIFT);
#ifdef MUTANT_NO_TAG
		uint64_t tag = h >> TAG_SHIFT;
#else
		uint64_t tag = (h >> TAG_SHIFT) + 1;
#endif
		uint64_t new = (set >> SET_SHIFT) | (tag << TAG_SHIFT);
		if (atomic_compare_exchange_strong_explicit(&global_head, &h, new, ACQ_REL, ACQ)) /* rust: donate compare_exchange AcqRel Acquire */
			break;
	}
}

/* ---- the client ---- */

static int held[3][2];   /* the sets each thread holds at the end */

static void *popper(void *arg)
{
	int t = (int)(intptr_t)arg;
	int s = pop_global();
	if (s != 0)
		assert((payload[s] == 10 * s || payload[s] == 10 * s + 1) && "a popped set with a payload it never had");
	held[t][0] = s;
	return NULL;
}

static void *cycler(void *arg)
{
	int first = pop_global();
	int second = pop_global();
	if (first != 0) {
		assert((payload[first] == 10 * first || payload[first] == 10 * first + 1) && "a popped set with a payload it never had");
		payload[first] = 10 * first + 1;   /* the set refilled by frees */
		/* complete(): onto the slot's own stack, then donate() moves it to the global stack */
		store(&link_of[first], load(&own_head[1]));
		store(&own_head[1], off_of(first));
		donate(1);
	}
	if (second != 0)
		assert((payload[second] == 10 * second || payload[second] == 10 * second + 1) && "a popped set with a payload it never had");
	held[1][1] = second;
	return NULL;
}

#ifdef DEEP
/* A second cycler (slot 2): pops one set and donates it back refilled. */
static void *cycler2(void *arg)
{
	int s = pop_global();
	if (s != 0) {
		assert((payload[s] == 10 * s || payload[s] == 10 * s + 1) && "a popped set with a payload it never had");
		payload[s] = 10 * s + 1;
		store(&link_of[s], load(&own_head[2]));
		store(&own_head[2], off_of(s));
		donate(2);
	}
	return NULL;
}
#endif

int main(void)
{
	payload[1] = 10;
	payload[2] = 20;
	atomic_init(&link_of[1], off_of(2));
	atomic_init(&link_of[2], 0);
	atomic_init(&global_head, off_of(1) >> SET_SHIFT);
	pthread_t p, c;
	pthread_create(&p, NULL, popper, (void *)(intptr_t)0);
	pthread_create(&c, NULL, cycler, NULL);
	pthread_t p2;
	pthread_create(&p2, NULL, popper, (void *)(intptr_t)2);
#ifdef DEEP
	pthread_t c2;
	pthread_create(&c2, NULL, cycler2, NULL);
	pthread_join(c2, NULL);
#endif
	pthread_join(p2, NULL);
	pthread_join(p, NULL);
	pthread_join(c, NULL);
	/* Every set exactly once: held or on the stack. */
	int count[NSETS] = {0};
	for (int t = 0; t < 3; t++)
		for (int k = 0; k < 2; k++)
			count[held[t][k]]++;
	uint64_t off = (atomic_load_explicit(&global_head, RLX) & SET_MASK) << SET_SHIFT;
	for (int n = 0; off != 0 && n < NSETS + 1; n++) {
		count[set_at(off)]++;
		off = atomic_load_explicit(&link_of[set_at(off)], RLX);
	}
	for (int s = 1; s < NSETS; s++)
		assert(count[s] == 1 && "a set lost or handed out twice");
	return 0;
}
