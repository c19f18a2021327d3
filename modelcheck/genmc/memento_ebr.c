/*
 * GenMC model of Memento's PM-safe epoch-based reclamation: a block retired in a critical section
 * is freed only once no thread can still hold a pointer to it.
 *
 * Models:
 *   impl/perdure-pm/src/epoch.rs: `Epochs::now`, `is_pinned`, `pin` (epoch, pin store, SeqCst
 *     fence, epoch re-checked), `pin_unfenced` (the mutant's), `unpin`, `try_advance`;
 *   impl/perdure-memento/src/ebr.rs: `Collector::pin`, `retire`, `unpin` (seal the retired
 *     blocks with the epoch, unpin, try to advance, free what was sealed two epochs ago); these
 *     have no atomic operation of their own. Deviation: `unpin` tries to advance the epoch at
 *     every unpin, not every ADVANCE_EVERY-th (16): that only frees sooner.
 * Not modelled: persistence (the deferred flushes), the parking of a crashed thread's bags, the
 * deduplication of a bag; shared pointers are read with `Handle::load` (SeqCst) as the memento
 * data structures do. A freed block is a plain FREED store into its payload; a use is a plain load.
 *
 * Client (2 threads; DEEP: a second reader):
 *   reader     pin; p = load(shared); read p's payload; unpin;
 *   reclaimer  pin; swap shared from block A to block B; retire(A); unpin; then up to 3 more
 *              pin/unpin rounds, each of which may advance the epoch and free A.
 * Invariants: the reader never reads a freed block (assertion, or a race GenMC reports); A is
 * freed at most once, B (still shared) never.
 *
 * Mutants (each must be reported as a violation):
 *   MUTANT_PIN_NO_FENCE    Collector::pin takes `pin_unfenced` (the Rust mutant EbrPinNoFence):
 *                          the reclaimer's scan of the pins misses a reader whose pin store is
 *                          still buffered while it loads the pointer (store buffering: every
 *                          model, TSO included).
 *   MUTANT_FREE_AFTER_ONE  a sealed bag is freed one epoch after its seal, not two: the reader
 *                          pinned in the seal's epoch uses the freed block (every model).
 *
 * Ordering mutants (tools/genmc-weaken.py, RC11): 0 of 15 caught, by redundancy: `Epochs::pin`
 * is SeqCst twice over (a SeqCst pin store and a SeqCst fence before the SeqCst re-load), as is
 * `try_advance` (a SeqCst fence before SeqCst loads of the pins), and the shared pointer is read
 * SeqCst (`Handle::load`): any one weakening leaves the store-load pair ordered. Taking both
 * away, as `pin_unfenced` does (a Release pin store, no fence), is caught: the row
 * memento-ebr-mutant-pin-no-fence.
 *
 * genmc-row: memento-ebr
 * genmc-row: memento-ebr-mutant-pin-no-fence -DMUTANT_PIN_NO_FENCE violates=rc11,imm,tso
 * genmc-row: memento-ebr-mutant-free-after-one -DMUTANT_FREE_AFTER_ONE violates=rc11,imm,tso
 */
#include <assert.h>
#include <genmc.h> /* __VERIFIER_assume */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#define SC memory_order_seq_cst
#define REL memory_order_release
#define RLX memory_order_relaxed

#ifdef DEEP
#define SLOTS 3
#else
#define SLOTS 2
#endif
#define PINNED 1UL
#define FREED (-1)
#define ROUNDS 4

/* ---- epoch.rs ---- */

static atomic_ulong global;
static atomic_ulong pins[SLOTS];

static uint64_t now(void)
{
	return atomic_load_explicit(&global, SC); /* rust: now load SeqCst */
}

static bool is_pinned(int slot)
{
	return (atomic_load_explicit(&pins[slot], SC) & PINNED) != 0; /* rust: is_pinned load SeqCst */
}

static uint64_t epochs_pin(int slot)   /* Epochs::pin */
{
	for (int r = 0;; r++) {
		__VERIFIER_assume(r < ROUNDS);
		uint64_t e = atomic_load_explicit(&global, SC);        /* rust: pin load SeqCst */
		atomic_store_explicit(&pins[slot], (e << 1) | PINNED, SC); /* rust: pin store SeqCst */
		atomic_thread_fence(SC);                                /* rust: pin fence SeqCst */
		if (atomic_load_explicit(&global, SC) == e)             /* rust: pin load SeqCst */
			return e;
	}
}

static uint64_t pin_unfenced(int slot)
{
	for (int r = 0;; r++) {
		__VERIFIER_assume(r < ROUNDS);
		uint64_t e = atomic_load_explicit(&global, SC);         /* rust: pin_unfenced load SeqCst */
		atomic_store_explicit(&pins[slot], (e << 1) | PINNED, REL); /* rust: pin_unfenced store Release */
		if (atomic_load_explicit(&global, SC) == e)              /* rust: pin_unfenced load SeqCst */
			return e;
	}
}

static void epochs_unpin(int slot)   /* Epochs::unpin */
{
	atomic_store_explicit(&pins[slot], 0, SC); /* rust: unpin store SeqCst */
}

static uint64_t try_advance(void)
{
	uint64_t e = atomic_load_explicit(&global, SC); /* rust: try_advance load SeqCst */
	atomic_thread_fence(SC);                         /* rust: try_advance fence SeqCst */
	for (int i = 0; i < SLOTS; i++) {
		uint64_t s = atomic_load_explicit(&pins[i], SC); /* rust: try_advance load SeqCst */
		if ((s & PINNED) != 0 && s >> 1 != e)
			return e;
	}
	uint64_t ex = e;
	if (atomic_compare_exchange_strong_explicit(&global, &ex, e + 1, SC, SC)) /* rust: try_advance compare_exchange SeqCst SeqCst */
		return e + 1;
	return ex;
}

/* ---- ebr.rs: the Collector (one bag: this client retires one block) ---- */

struct block { int payload; };   /* plain: FREED once freed */
static struct block blocks[2];   /* A, B */
static _Atomic(struct block *) shared;

struct participant {
	int tid;
	struct block *retired;   /* the open bag */
	struct block *sealed;    /* the sealed bag */
	uint64_t sealed_at;
};

static bool pin(struct participant *p)
{
	if (is_pinned(p->tid))
		return true;
#ifdef MUTANT_PIN_NO_FENCE
	pin_unfenced(p->tid);
#else
	epochs_pin(p->tid);
#endif
	return false;
}

static void retire(struct participant *p, struct block *b)
{
	assert(is_pinned(p->tid));
	p->retired = b;
}

static int frees;

static void unpin(struct participant *p)
{
	uint64_t e = now();
	if (p->retired) {
		p->sealed = p->retired;
		p->sealed_at = e;
		p->retired = NULL;
	}
	epochs_unpin(p->tid);
	uint64_t n = try_advance();   /* every unpin (the Rust code: every 16th) */
#ifdef MUTANT_FREE_AFTER_ONE
	if (p->sealed && p->sealed_at + 1 <= n) {
#else
	if (p->sealed && p->sealed_at + 2 <= n) {
#endif
		p->sealed->payload = FREED;   /* free */
		frees++;
		p->sealed = NULL;
	}
}

/* ---- the client ---- */

static void *reader(void *arg)
{
	struct participant me = {(int)(intptr_t)arg, NULL, NULL, 0};
	pin(&me);
	struct block *b = atomic_load_explicit(&shared, SC);   /* Handle::load */
	assert(b->payload != FREED && "a block read after it was freed");
	unpin(&me);
	return NULL;
}

static struct participant rec = {0, NULL, NULL, 0};

static void *reclaimer(void *arg)
{
	pin(&rec);
	struct block *old = atomic_exchange_explicit(&shared, &blocks[1], SC);
	retire(&rec, old);
	unpin(&rec);
	for (int i = 0; i < 3 && rec.sealed; i++) {
		pin(&rec);
		unpin(&rec);
	}
	return NULL;
}

int main(void)
{
	blocks[0].payload = 1;
	blocks[1].payload = 2;
	atomic_init(&shared, &blocks[0]);
	pthread_t r, c;
	pthread_create(&c, NULL, reclaimer, NULL);
	pthread_create(&r, NULL, reader, (void *)(intptr_t)1);
#ifdef DEEP
	pthread_t r2;
	pthread_create(&r2, NULL, reader, (void *)(intptr_t)2);
	pthread_join(r2, NULL);
#endif
	pthread_join(r, NULL);
	pthread_join(c, NULL);
	assert(frees <= 1);
	assert(blocks[1].payload == 2 && "the live block was freed");
	return 0;
}
