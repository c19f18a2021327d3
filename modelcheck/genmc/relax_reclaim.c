/*
 * GenMC model of RELAX's epoch-based reclamation of unlinked nodes (the persistent SMR's
 * volatile side): a node retired in a critical section returns to the heap only once no thread
 * pinned when it was still reachable can read it.
 *
 * Models: impl/perdure-relax/src/space.rs: `Handle::critical` (pin, the operation, unpin, try to
 * advance and reclaim), `Handle::retire` (the node tagged with the *global* epoch read at
 * retirement), `Handle::reclaim` (free what was retired two epochs ago); over
 * impl/perdure-pm/src/epoch.rs: `Epochs::now`, `pin`, `unpin`, `try_advance`. Deviation: every
 * unpin tries to advance (the space's `eager_reclaim` mode; by default every ADVANCE_EVERY-th).
 * Not modelled: the heap's free (a plain FREED store into the node's payload), persistence, the
 * audit log, the NVMM half of mirror_cas and the sequence word of a link. The unlink is the
 * 16-byte CAS of the link and a reader's load is `read_pair`: by default as on x86_64 with
 * cmpxchg16b (the CAS a locked, SeqCst read-modify-write; `read_pair` Acquire loads);
 * -DEMULATED_DWCAS as the emulation of impl/perdure-pm/src/dword.rs (off x86_64 or without
 * cx16, and under loom and shuttle): one global mutex (std's futex mutex: an Acquire CAS to lock,
 * a Release swap to unlock), Acquire loads and Release stores inside; `read_pair` there is a
 * 16-byte CAS-load under the same mutex.
 *
 * Client (3 threads; epoch 0; the shared pointer names node X):
 *   advancer  an empty critical section (its unpin advances the epoch when no one holds it back);
 *   reader    critical { p = load(shared); read p's payload };
 *   retirer   critical { unlink X (shared: X -> Y); retire(X) } (its end may advance the epoch
 *             and reclaim X); DEEP: then up to two empty critical sections (each may advance
 *             the epoch and reclaim X).
 * The schedule the retire tag is about (found by tests/shuttle_sets.rs): the retirer pins epoch
 * 0, the advancer moves it to 1, the reader pins 1 and reads X, the retirer unlinks and retires
 * X, then advances to 2 while the reader is still inside.
 * Invariant: the reader never reads a freed node (assertion, or a race GenMC reports); Y is
 * never freed, X at most once.
 *
 * What the retire tag rests on (checked here, and not said in the code): `retire` reads the
 * global epoch with a SeqCst load right after the unlink, and the tag is right only if that load
 * cannot miss an epoch a reader of the node had already pinned. With native cmpxchg16b the
 * unlink is a SeqCst read-modify-write, ordered before the load; in the emulation the unlink's
 * stores are Release, which alone do not order them before a later load (-DREAD_WITHOUT_LOCK:
 * violated under RC11 and IMM), and what saves it is that readers take the same global mutex.
 *
 * Mutants (each must be reported as a violation):
 *   MUTANT_RETIRE_PIN_EPOCH  retire tags the node with the epoch this thread pinned, not the
 *                            global one: X is freed at pin + 2 while the reader pinned at
 *                            pin + 1 still reads it (the bug shuttle found; every model).
 *   MUTANT_PIN_NO_FENCE      critical pins with `pin_unfenced` (the Rust mutant
 *                            SpacePinNoFence; every model).
 *   -DEMULATED_DWCAS -DREAD_WITHOUT_LOCK  the emulation with a reader that loads the link without
 *                            the mutex (an 8-byte Acquire load, as the x86_64 path does): the
 *                            retirer's epoch load overtakes its Release unlink and the tag is
 *                            one epoch short (RC11, IMM; TSO keeps the order and passes).
 *
 * Ordering mutants (tools/genmc-weaken.py, RC11): see the README's table.
 *
 * genmc-row: relax-reclaim
 * genmc-row: relax-reclaim-emulated -DEMULATED_DWCAS
 * genmc-row: relax-reclaim-mutant-retire-pin-epoch -DMUTANT_RETIRE_PIN_EPOCH violates=rc11,imm,tso
 * genmc-row: relax-reclaim-mutant-pin-no-fence -DMUTANT_PIN_NO_FENCE violates=rc11,imm,tso
 * genmc-row: relax-reclaim-mutant-unlocked-read -DEMULATED_DWCAS -DREAD_WITHOUT_LOCK violates=rc11,imm
 */
#include <assert.h>
#include <genmc.h> /* __VERIFIER_assume */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#define SC memory_order_seq_cst
#define ACQ memory_order_acquire
#define REL memory_order_release
#define ACQ_REL memory_order_acq_rel
#define RLX memory_order_relaxed

#define SLOTS 3
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

#ifdef MUTANT_PIN_NO_FENCE
static uint64_t pin_unfenced(int slot)
{
	for (int r = 0;; r++) {
		__VERIFIER_assume(r < ROUNDS);
		uint64_t e = atomic_load_explicit(&global, SC);
		atomic_store_explicit(&pins[slot], (e << 1) | PINNED, REL);
		if (atomic_load_explicit(&global, SC) == e)
			return e;
	}
}
#endif

/* ---- space.rs: a thread's Handle (one limbo entry: this client retires one node) ---- */

struct node { int payload; };   /* plain: FREED once freed */
static struct node nodes[2];     /* X, Y */
static _Atomic(struct node *) shared;

struct handle {
	int slot;
	uint64_t pinned;        /* the epoch its pin saw (the mutant's tag) */
	struct node *limbo;
	uint64_t limbo_epoch;
};

static int frees;

static void reclaim(struct handle *h, uint64_t now)
{
	if (h->limbo && !(h->limbo_epoch + 2 > now)) {
		h->limbo->payload = FREED;   /* heap.free(off) */
		frees++;
		h->limbo = NULL;
	}
}

static void retire(struct handle *h, struct node *n)
{
#ifdef MUTANT_RETIRE_PIN_EPOCH
	uint64_t e = h->pinned;
#else
	uint64_t e = now();
#endif
	h->limbo = n;
	h->limbo_epoch = e;
}

static void critical_begin(struct handle *h)
{
#ifdef MUTANT_PIN_NO_FENCE
	h->pinned = pin_unfenced(h->slot);
#else
	h->pinned = epochs_pin(h->slot);
#endif
}

static void critical_end(struct handle *h)
{
	epochs_unpin(h->slot);
	uint64_t n = try_advance();   /* eager: every unpin */
	reclaim(h, n);
}

/* The unlink: a 16-byte CAS of the link (mirror_cas). Native cmpxchg16b (x86_64) is a locked
 * instruction, a SeqCst read-modify-write; the emulation of impl/perdure-pm/src/dword.rs (off
 * x86_64, and under loom and shuttle) takes a mutex, loads Acquire and stores Release. */
#ifdef EMULATED_DWCAS
static atomic_int dw_lock;
static struct node *unlink_x(void)
{
	int z = 0;
	__VERIFIER_assume(atomic_compare_exchange_strong_explicit(&dw_lock, &z, 1, ACQ, RLX));   /* Mutex::lock */
	struct node *seen = atomic_load_explicit(&shared, ACQ);
	atomic_store_explicit(&shared, &nodes[1], REL);
	atomic_exchange_explicit(&dw_lock, 0, REL);   /* unlock: std's futex Mutex swaps (Release) */
	return seen;
}
/* read_pair off x86_64: a 16-byte CAS-load under the same lock */
static struct node *read_link(void)
{
#ifdef READ_WITHOUT_LOCK
	return atomic_load_explicit(&shared, ACQ);
#else
	int z = 0;
	__VERIFIER_assume(atomic_compare_exchange_strong_explicit(&dw_lock, &z, 1, ACQ, RLX));
	struct node *seen = atomic_load_explicit(&shared, ACQ);
	atomic_exchange_explicit(&dw_lock, 0, REL);
	return seen;
#endif
}
#else
static struct node *unlink_x(void)
{
	return atomic_exchange_explicit(&shared, &nodes[1], SC);
}
/* read_pair on x86_64: Acquire loads */
static struct node *read_link(void)
{
	return atomic_load_explicit(&shared, ACQ);
}
#endif

/* ---- the client ---- */

static void *advancer(void *arg)
{
	struct handle h = {0, 0, NULL, 0};
	critical_begin(&h);
	critical_end(&h);
	return NULL;
}

static void *reader(void *arg)
{
	struct handle h = {1, 0, NULL, 0};
	critical_begin(&h);
	struct node *p = read_link();
	assert(p->payload != FREED && "a node read after it was freed");
	critical_end(&h);
	return NULL;
}

static void *retirer(void *arg)
{
	struct handle h = {2, 0, NULL, 0};
	critical_begin(&h);
	struct node *old = unlink_x();
	retire(&h, old);
	critical_end(&h);
#ifdef DEEP
	for (int i = 0; i < 2 && h.limbo; i++) {
		critical_begin(&h);
		critical_end(&h);
	}
#endif
	return NULL;
}

int main(void)
{
	nodes[0].payload = 1;
	nodes[1].payload = 2;
	atomic_init(&shared, &nodes[0]);
	pthread_t a, r, t;
	pthread_create(&t, NULL, retirer, NULL);
	pthread_create(&a, NULL, advancer, NULL);
	pthread_create(&r, NULL, reader, NULL);
	pthread_join(a, NULL);
	pthread_join(r, NULL);
	pthread_join(t, NULL);
	assert(frees <= 1);
	assert(nodes[1].payload == 2 && "the live node was freed");
	return 0;
}
