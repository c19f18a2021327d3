/*
 * GenMC model of CX's turn queue and of the hazard-pointer protected walk along it, against the
 * reclamation of its nodes.
 *
 * Models (every atomic operation with the Rust code's ordering; all SeqCst but the statistics):
 *   impl/perdure-ptm/src/cx/queue.rs: `TurnQueue::enqueue` (the four steps of the turn-queue
 *     enqueue: announce, link the node whose turn it is, ticket then advance the tail, clear the
 *     announcement), `protect`, `clear`, `protect_next` (hazard pointer, validation, and the test
 *     for a self-linked `next` that shuttle found missing), `retire_range` (retire, dispose of by
 *     self-linking, hand the successor to the retired list), `scan` (self-linked, no hazard
 *     pointer, no reference: free), `Node::is_self_linked`, `Node::ticket`;
 *   impl/perdure-ptm/src/cx/core.rs: `Comb::update_head` (a `Combined` head's reference count:
 *     CX-PUC's and CX-PTM's), and of `update_on` the walk {3}-{4}: the head load, the step by
 *     `protect_next`, the result stores, the copy from the designated replica when the walk meets
 *     a disposed node (its head load), then `update_head` to our node.
 * Not modelled: the locks of the replicas (rwlock.c models the lock), `cur_comb` and its CAS, the
 * replay window (taken as unbounded: a replica is copied only when the walk meets a disposed node),
 * persistence. A node is one of a static array; freeing it (`drop(Box::from_raw(p))`) is a plain
 * store of FREED into its `job`, and every dereference of a node in the Rust code is a plain load
 * of its `job` here (`use_node`): a use of a freed node is then either a failed assertion or, when
 * the free is not ordered with it, a race GenMC reports.
 *
 * Client `cx-turn-queue` (N = 2 threads, under DEEP too: 3 enqueuers did not finish in 20
 * minutes): thread t enqueues one node (tid t, HP_MY set around it, as `Cx::publish` does).
 * Invariants, after the joins (as tests/loom_cx_queue.rs): every node is linked exactly once,
 * tickets are consecutive in list order (1..N after the sentinel's 0), the tail is the last
 * node, every announcement slot is empty; during the run: a node is linked within N iterations
 * of enqueue's loop (the turns), has its ticket when its enqueue returns, and enqueues are FIFO
 * in real time (thread 1 enqueues after thread 0's enqueue has returned, when a ghost flag says
 * so, and then gets the later ticket).
 *
 * Client `cx-hp-walk` (-DWALK; 2 threads): the queue holds a sentinel s0 and nodes
 * n1..n4 (tickets 0..4); the designated `Combined` D has head n4, the walker's `Combined` W head
 * n1 (each head holds one reference). Each node's closure adds 1 << ticket to a replica.
 *   retirer (tid 0)  the winner of the `cur_comb` CAS that moved the designated head from s0 to n4:
 *                    retire_range(s0, n4, window 1) (disposes of s0, n1, n2 and retires their
 *                    successors n1, n2, n3), then scan;
 *   walker (tid 1)   publishes n5 (HP_MY, enqueue), then walks W's replica from n1 to n5 as
 *                    update_on does: a disposed node makes it copy D (head n4, W's head moved by
 *                    update_head), else protect_next steps to the successor and runs its closure;
 *                    at the end update_head(n5) and the walk's hazard pointers cleared;
 *   -DWALK3 (no row; DEEP keeps the CI client): an enqueuer (tid 2) publishes and enqueues n6
 *   meanwhile (the walker's enqueue helps it); it did not finish in 25 minutes (RC11).
 * Invariants: no node is used after it was freed (assertion or race); a step never goes from a
 * node to itself, and goes to the node with the next ticket (no closure run twice, none skipped);
 * the walker's replica ends holding exactly the closures of the tickets up to n5's; after the
 * joins and a last scan, the two nodes that are disposed of and unreferenced (n1, n2) are freed
 * and n3 (still linked) is not.
 *
 * Client `cx-refcnt` (-DREFCNT; 2 threads): a node M, disposed of and in a scanner's retired
 * list, is named by a walker's hazard pointer; the walker makes M its Combined's head
 * (update_head), clears the hazard pointer and uses M; the scanner scans once (DEEP: twice).
 * Invariant: M is never freed (the hazard pointer, then the reference, keep it), and no use of
 * a freed node. This is the reference count of CX-PUC's and CX-PTM's heads deciding a free.
 *
 * Mutants (rows genmc:cx-*-mutant-*, each must be reported as a violation):
 *   MUTANT_SCAN_REFCNT_FIRST    scan reads the reference count before the hazard pointers (the
 *                               code's order is the other): it reads 0 before the walker's
 *                               update_head, then the cleared hazard pointer, and frees M
 *                               (every model).
 *   MUTANT_TICKET_AFTER_TAIL    enqueue's step 3 advances the tail before storing the ticket: a
 *                               helper computes a ticket from INVALID (every model).
 *   MUTANT_NO_SELF_LINK_TEST    protect_next without its `next == m` test (the bug shuttle found):
 *                               the walk steps from a disposed node to itself and runs its closure
 *                               a second time (every model).
 *   MUTANT_NO_VALIDATION        protect_next without the re-load of `m.next` after the hazard
 *                               pointer: the scan frees the successor under the walker (every model).
 *
 * Ordering mutants (tools/genmc-weaken.py, RC11, 34 one-step weakenings per row, 3 of them of a
 * failure ordering, which GenMC does not model): `cx-hp-walk`
 * catches 4, the two store-load (Dekker) pairs of the hazard pointers: `protect`'s store and
 * `protect_next`'s validating load against `retire_range`'s self-linking store and `scan`'s
 * hazard-pointer load (each weakened: a race on a freed node). `cx-turn-queue` catches none. The
 * survivors are stronger than these clients need:
 *   - the turn queue (tail, `next`, the announcements, the tickets) passes every value from one
 *     thread to another by a store or CAS that a later load reads, and a CAS on one location is
 *     atomic in its modification order whatever its ordering: release/acquire (each SeqCst
 *     weakened one step) keeps every such message, and the checked properties (each node once,
 *     consecutive tickets, FIFO in real time, linked within N iterations) hold; no weakening to
 *     Relaxed is tried (one step only);
 *   - update_head's three read-modify-writes, `clear` and the refcnt load of `scan`: a
 *     read-modify-write reads the last value in modification order whatever its ordering, and
 *     the hand-over from hazard pointer to reference (`cx-refcnt`, 0 of 34 caught) is message
 *     passing, not a store-load pair: a scan that reads the cleared hazard pointer synchronises
 *     with the clear, which comes after the increment, under release/acquire already; reading
 *     the count first is wrong whatever the orderings (MUTANT_SCAN_REFCNT_FIRST);
 *   - `is_self_linked`, `ticket`, retire_range's walk and successor loads: single
 *     locations read for a value, not ordered against another location's store;
 *   - in `cx-turn-queue` nothing is freed, so the hazard pointers decide nothing there.
 *
 * Orderings (tools/genmc-orderings.py): update_on is transcribed only in its walk.
 * genmc-partial: update_on
 *
 * genmc-row: cx-turn-queue
 * genmc-row: cx-turn-queue-mutant-ticket-after-tail -DMUTANT_TICKET_AFTER_TAIL violates=rc11,imm,tso
 * genmc-row: cx-refcnt -DREFCNT
 * genmc-row: cx-refcnt-mutant-scan-refcnt-first -DREFCNT -DMUTANT_SCAN_REFCNT_FIRST violates=rc11,imm,tso
 * genmc-row: cx-hp-walk -DWALK
 * genmc-row: cx-hp-walk-mutant-no-self-link-test -DWALK -DMUTANT_NO_SELF_LINK_TEST violates=rc11,imm,tso
 * genmc-row: cx-hp-walk-mutant-no-validation -DWALK -DMUTANT_NO_VALIDATION violates=rc11,imm,tso
 */
#include <assert.h>
#include <genmc.h> /* __VERIFIER_assume */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#define SC memory_order_seq_cst
#define RLX memory_order_relaxed
#define REL memory_order_release

#if defined(WALK3) && defined(WALK)
#define N 3
#define ROUNDS 12
#else
#define N 2
#define ROUNDS 8
#endif

#define INVALID UINT64_MAX
#define SEQ_MASK ((1ULL << 44) - 1)
#define FREED (-1)

#define HP_TAIL 0
#define HP_TAIL_NEXT 1
#define HP_WALK0 2
#define HP_WALK1 3
#define HP_MY 4
#define HPS 5

#define MAXNODES 8

static inline uint64_t seq_add(uint64_t s, uint64_t d) { return (s + d) & SEQ_MASK; }
static inline uint64_t seq_dist(uint64_t a, uint64_t b) { return (a - b) & SEQ_MASK; }

struct node {
	int job;   /* plain: the closure (`Option<J>`; 0 for a sentinel), FREED once freed */
	atomic_ulong result;
	atomic_bool panicked;
	_Atomic(struct node *) next;
	atomic_ulong ticket;
	atomic_ulong refcnt;
	int enq_tid;   /* plain, immutable */
};

static struct node nodes[MAXNODES];
static _Atomic(struct node *) tail;
static _Atomic(struct node *) enqueuers[N];
static _Atomic(struct node *) hp[N][HPS];
static atomic_ulong disposed, freed;   /* statistics */

/* A dereference of a node: it must not have been freed. */
static inline void use_node(struct node *p)
{
	assert(p->job != FREED && "a node was used after it was freed");
}

/* drop(Box::from_raw(p)) */
static inline void free_node(struct node *p)
{
	p->job = FREED;
}

/* ---- queue.rs ---- */

static bool is_self_linked(struct node *self)
{
	return atomic_load_explicit(&self->next, SC) == self; /* rust: is_self_linked load SeqCst */
}

static uint64_t ticket(struct node *self)
{
	return atomic_load_explicit(&self->ticket, SC); /* rust: ticket load SeqCst */
}

static void protect(int tid, int slot, struct node *p)
{
	atomic_store_explicit(&hp[tid][slot], p, SC); /* rust: protect store SeqCst */
}

static void clear(int tid, int slot)
{
	atomic_store_explicit(&hp[tid][slot], NULL, REL); /* rust: clear store Release */
}

static struct node *protect_next(int tid, int slot, struct node *m)
{
	struct node *next = atomic_load_explicit(&m->next, SC); /* rust: protect_next load SeqCst */
#ifdef MUTANT_NO_SELF_LINK_TEST
	if (next == NULL)
		return NULL;
#else
	if (next == NULL || next == m)
		return NULL;
#endif
	protect(tid, slot, next);
#ifdef MUTANT_NO_VALIDATION
	return next;
#else
	return atomic_load_explicit(&m->next, SC) == next ? next : NULL; /* rust: protect_next load SeqCst */
#endif
}

static void enqueue(struct node *my, int tid)
{
	struct node *me = my;
	use_node(me);
	atomic_store_explicit(&enqueuers[tid], my, SC); /* rust: enqueue store SeqCst */
	int iterations = 0;
	for (;;) {
		if (atomic_load_explicit(&enqueuers[tid], SC) == NULL) /* rust: enqueue load SeqCst */
			break; /* a helper did all four steps */
		if (iterations >= N && ticket(me) != INVALID)
			break; /* linked */
		/* The turn argument of the module docs: linked within N iterations (the code checks it
		 * rather than assume it; the model asserts it). */
		assert(iterations < N && "not linked after N iterations");
		iterations++;
		__VERIFIER_assume(iterations <= ROUNDS);
		struct node *ltail = atomic_load_explicit(&tail, SC); /* rust: enqueue load SeqCst */
		protect(tid, HP_TAIL, ltail);
		if (ltail != atomic_load_explicit(&tail, SC)) /* rust: enqueue load SeqCst */
			continue;
		use_node(ltail);
		/* Step 4 for the node that is tail now. */
		_Atomic(struct node *) *owner = &enqueuers[ltail->enq_tid];
		if (atomic_load_explicit(owner, SC) == ltail) { /* rust: enqueue load SeqCst */
			struct node *e = ltail;
			atomic_compare_exchange_strong_explicit(owner, &e, NULL, SC, SC); /* rust: enqueue compare_exchange SeqCst SeqCst */
		}
		/* Step 2: link the node whose turn it is. */
		for (int j = 1; j <= N; j++) {
			struct node *help = atomic_load_explicit(&enqueuers[(j + ltail->enq_tid) % N], SC); /* rust: enqueue load SeqCst */
			if (help == NULL)
				continue;
			struct node *e = NULL;
			atomic_compare_exchange_strong_explicit(&ltail->next, &e, help, SC, SC); /* rust: enqueue compare_exchange SeqCst SeqCst */
			break;
		}
		/* Step 3: ticket, then advance the tail. */
		struct node *lnext = atomic_load_explicit(&ltail->next, SC); /* rust: enqueue load SeqCst */
		if (lnext != NULL) {
			protect(tid, HP_TAIL_NEXT, lnext);
			if (ltail != atomic_load_explicit(&tail, SC)) /* rust: enqueue load SeqCst */
				continue;
			use_node(lnext);
			struct node *e = ltail;
#ifdef MUTANT_TICKET_AFTER_TAIL
			atomic_compare_exchange_strong_explicit(&tail, &e, lnext, SC, SC);
			atomic_store_explicit(&lnext->ticket, seq_add(ticket(ltail), 1), SC);
#else
			atomic_store_explicit(&lnext->ticket, seq_add(ticket(ltail), 1), SC); /* rust: enqueue store SeqCst */
			atomic_compare_exchange_strong_explicit(&tail, &e, lnext, SC, SC); /* rust: enqueue compare_exchange SeqCst SeqCst */
#endif
		}
	}
	atomic_store_explicit(&enqueuers[tid], NULL, SC); /* rust: enqueue store SeqCst */
	clear(tid, HP_TAIL);
	clear(tid, HP_TAIL_NEXT);
}

/* A thread's Retirer: its FIFO and its retired list (touched by that thread only). */
struct retirer {
	struct node *fifo[MAXNODES];
	int head, len;
	struct node *retired[MAXNODES];
	int nretired;
};

static void scan(struct retirer *r);

static void retire_range(struct retirer *r, struct node *from, struct node *to, uint64_t window)
{
	struct node *p = from;
	while (p != to && p != NULL) {
		r->fifo[r->head + r->len++] = p;
		use_node(p);
		p = atomic_load_explicit(&p->next, SC); /* rust: retire_range load SeqCst */
	}
	if (r->len == 0)
		return;
	struct node *newest = r->fifo[r->head + r->len - 1];
	use_node(newest);
	uint64_t newest_t = ticket(newest);
	while (r->len > 0) {
		struct node *old = r->fifo[r->head];
		use_node(old);
		if (seq_dist(newest_t, ticket(old)) < window)
			break;
		r->head++;
		r->len--;
		struct node *succ = atomic_load_explicit(&old->next, SC); /* rust: retire_range load SeqCst */
		atomic_store_explicit(&old->next, old, SC);               /* rust: retire_range store SeqCst */
		atomic_fetch_add_explicit(&disposed, 1, RLX);             /* rust: retire_range fetch_add Relaxed */
		if (succ != NULL)
			r->retired[r->nretired++] = succ;
	}
	if (r->nretired > 2 * (HPS + 2) * N + 16)   /* scan_threshold: never reached here */
		scan(r);
}

static void scan(struct retirer *r)
{
	int kept = 0, nfreed = 0;
	for (int i = 0; i < r->nretired; i++) {
		struct node *p = r->retired[i];
		use_node(p);
		bool keep = !is_self_linked(p);
#ifdef MUTANT_SCAN_REFCNT_FIRST
		if (!keep)
			keep = atomic_load_explicit(&p->refcnt, SC) != 0;
#endif
		for (int t = 0; t < N && !keep; t++)
			for (int s = 0; s < HPS && !keep; s++)
				keep = atomic_load_explicit(&hp[t][s], SC) == p; /* rust: scan load SeqCst */
#ifndef MUTANT_SCAN_REFCNT_FIRST
		if (!keep)
			keep = atomic_load_explicit(&p->refcnt, SC) != 0; /* rust: scan load SeqCst */
#endif
		if (keep) {
			r->retired[kept++] = p;
			continue;
		}
		free_node(p);
		nfreed++;
	}
	r->nretired = kept;
	atomic_fetch_add_explicit(&freed, nfreed, RLX); /* rust: scan fetch_add Relaxed */
}

/* ---- core.rs ---- */

struct comb {
	_Atomic(struct node *) head;
	uint64_t replica;   /* plain: written by the holder of the lock (exclusive) only */
};

static void update_head(struct comb *self, struct node *new)
{
	if (new != NULL) {
		use_node(new);
		atomic_fetch_add_explicit(&new->refcnt, 1, SC); /* rust: update_head fetch_add SeqCst */
	}
	struct node *old = atomic_exchange_explicit(&self->head, new, SC); /* rust: update_head swap SeqCst */
	if (old != NULL) {
		use_node(old);
		atomic_fetch_sub_explicit(&old->refcnt, 1, SC); /* rust: update_head fetch_sub SeqCst */
	}
}

/* ---- the clients ---- */

#if defined(REFCNT)

/* A node M, disposed of (self-linked) and in the scanner's retired list, that a walker has
 * reached: its hazard pointer names M; the walker then makes M its Combined's head
 * (update_head: M gains the head's reference), clears the hazard pointer and goes on using M
 * (as the head of its replica). The reference must keep M alive from the moment the hazard
 * pointer no longer does. DEEP: the scanner scans twice. */
static struct comb w_comb;
static struct retirer scanner_r;

static void *scanner(void *arg)
{
	scan(&scanner_r);
#ifdef DEEP
	scan(&scanner_r);
#endif
	return NULL;
}

static void *holder(void *arg)
{
	const int tid = 1;
	struct node *m = &nodes[2];
	update_head(&w_comb, m);
	clear(tid, HP_WALK0);
	use_node(m);   /* the replica's head: kept by the reference */
	return NULL;
}

int main(void)
{
	for (int i = 0; i < 3; i++) {
		nodes[i].job = i;
		atomic_init(&nodes[i].ticket, (uint64_t)i);
	}
	atomic_init(&nodes[1].next, &nodes[1]);   /* P, disposed of */
	atomic_init(&nodes[2].next, &nodes[2]);   /* M, P's successor, disposed of since */
	atomic_init(&w_comb.head, &nodes[0]);     /* the walker's Combined's old head */
	atomic_init(&nodes[0].refcnt, 1);
	atomic_init(&hp[1][HP_WALK0], &nodes[2]); /* the walker's validated step to M */
	scanner_r.retired[scanner_r.nretired++] = &nodes[2];
	pthread_t s, h;
	pthread_create(&s, NULL, scanner, NULL);
	pthread_create(&h, NULL, holder, NULL);
	pthread_join(s, NULL);
	pthread_join(h, NULL);
	assert(nodes[2].job != FREED && "a node a Combined head names was freed");
	return 0;
}

#elif !defined(WALK)

#define NODE(i) (&nodes[i])   /* nodes[0] is the sentinel, nodes[1 + t] thread t's */
static atomic_bool done0;         /* ghost: thread 0's enqueue has returned */
static atomic_ulong ticket_of0;   /* ghost: the ticket it got */

static void *enqueuer(void *arg)
{
	int t = (int)(intptr_t)arg;
	struct node *n = NODE(1 + t);
	n->job = 1 + t;   /* Node::boxed, by the enqueuing thread: published by the announcement */
	n->enq_tid = t;
	bool after0 = t == 1 && atomic_load_explicit(&done0, SC);
	protect(t, HP_MY, n);
	enqueue(n, t);
	uint64_t tk = ticket(n);
	assert(tk >= 1 && tk <= N && "a node left enqueue without its ticket");
	if (t == 0) {
		atomic_store_explicit(&ticket_of0, tk, SC);
		atomic_store_explicit(&done0, true, SC);
	}
	if (after0)
		assert(tk > atomic_load_explicit(&ticket_of0, SC) && "an enqueue overtook one that had returned");
	clear(t, HP_MY);
	return NULL;
}

int main(void)
{
	for (int i = 0; i <= N; i++) {
		atomic_init(&nodes[i].next, NULL);
		atomic_init(&nodes[i].ticket, i == 0 ? 0 : INVALID);
	}
	atomic_init(&nodes[0].refcnt, 1);
	atomic_init(&tail, NODE(0));
	pthread_t th[N];
	for (int t = 0; t < N; t++)
		pthread_create(&th[t], NULL, enqueuer, (void *)(intptr_t)t);
	for (int t = 0; t < N; t++)
		pthread_join(th[t], NULL);
	/* The list from the sentinel: tickets follow it, each node once, the tail last. */
	int seen[N + 1] = {0};
	uint64_t expect = 0;
	int count = 0;
	for (struct node *p = NODE(0); p != NULL; p = atomic_load_explicit(&p->next, RLX)) {
		assert(atomic_load_explicit(&p->ticket, RLX) == expect && "tickets do not follow the list");
		expect++;
		assert(seen[p->job]++ == 0 && "a node linked twice");
		count++;
		if (atomic_load_explicit(&p->next, RLX) == NULL)
			assert(atomic_load_explicit(&tail, RLX) == p && "the tail is not the last node");
	}
	assert(count == N + 1 && "a node was not linked");
	for (int t = 0; t < N; t++)
		assert(atomic_load_explicit(&enqueuers[t], RLX) == NULL && "an announcement left behind");
	return 0;
}

#else /* WALK */

/* nodes[0] = s0, nodes[1..4] = n1..n4, nodes[5] = n5 (the walker's), nodes[6] = n6 (DEEP) */
#define WALKER_NODE 5
static struct comb combs[2];   /* D = combs[0] (designated, head n4), W = combs[1] (head n1) */
static struct retirer retirer0;

static void *retirer(void *arg)
{
	retire_range(&retirer0, &nodes[0], &nodes[4], 1);
	scan(&retirer0);
	return NULL;
}

static void *walker(void *arg)
{
	const int tid = 1;
	struct node *my = &nodes[WALKER_NODE];
	my->job = WALKER_NODE;   /* Node::boxed */
	my->enq_tid = tid;
	protect(tid, HP_MY, my);   /* Cx::publish */
	enqueue(my, tid);
	uint64_t my_t = ticket(my);
	struct comb *c = &combs[1];
	struct node *mn = atomic_load_explicit(&c->head, SC); /* rust: update_on load SeqCst */
	int walk = 0, rounds = 0;
	while (mn != my) {
		__VERIFIER_assume(++rounds <= ROUNDS);
		use_node(mn);
		if (is_self_linked(mn)) {
			/* get_combined and the copy: D is designated (cur_comb is not modelled), its head n4
			 * is kept by D's reference while the copier holds D's shared lock. */
			c->replica = combs[0].replica;
			mn = atomic_load_explicit(&combs[0].head, SC); /* rust: update_on load SeqCst */
			update_head(c, mn);
			continue;
		}
		struct node *next = protect_next(tid, walk ? HP_WALK0 : HP_WALK1, mn);
		if (next == NULL) {
			/* self-linked (the next turn copies), or no successor, which the queue order rules
			 * out (ours follows) */
			assert(is_self_linked(mn) && "a gap before our node");
			continue;
		}
		use_node(next);
		assert(next != mn && "a walk stepped from a disposed node to itself");
		assert(ticket(next) == seq_add(ticket(mn), 1) && "a walk skipped a node or went back");
		if (next->job != 0) {
			c->replica += 1ULL << ticket(next);   /* F::run: the closure on the replica */
			atomic_store_explicit(&next->result, c->replica, SC); /* rust: update_on store SeqCst */
			atomic_store_explicit(&next->panicked, false, SC);    /* rust: update_on store SeqCst */
		}
		walk ^= 1;
		mn = next;
	}
	update_head(c, my);
	clear(tid, HP_WALK0);
	clear(tid, HP_WALK1);
	/* every closure up to ours, once each: tickets 1..my_t */
	assert(c->replica == (1ULL << (my_t + 1)) - 2 && "the replica is not the state at our node");
	clear(tid, HP_MY);   /* Cx::release_my */
	return NULL;
}

#ifdef WALK3
static void *enqueuer2(void *arg)
{
	struct node *n = &nodes[6];
	n->job = 6;
	n->enq_tid = 2;
	protect(2, HP_MY, n);
	enqueue(n, 2);
	clear(2, HP_MY);
	return NULL;
}
#endif

int main(void)
{
	for (int i = 0; i < MAXNODES; i++) {
		if (i <= 4) {
			nodes[i].job = i;   /* s0's 0: a sentinel has no closure */
			nodes[i].enq_tid = 0;
		}
		atomic_init(&nodes[i].ticket, i <= 4 ? (uint64_t)i : INVALID);
		atomic_init(&nodes[i].next, i < 4 ? &nodes[i + 1] : NULL);
	}
	atomic_init(&tail, &nodes[4]);
	atomic_init(&nodes[1].refcnt, 1);   /* W's head */
	atomic_init(&nodes[4].refcnt, 1);   /* D's head */
	atomic_init(&combs[0].head, &nodes[4]);
	atomic_init(&combs[1].head, &nodes[1]);
	combs[0].replica = 2 + 4 + 8 + 16;   /* the state at n4 */
	combs[1].replica = 2;                /* the state at n1 */
	pthread_t r, w;
	pthread_create(&r, NULL, retirer, NULL);
	pthread_create(&w, NULL, walker, NULL);
#ifdef WALK3
	pthread_t e;
	pthread_create(&e, NULL, enqueuer2, NULL);
	pthread_join(e, NULL);
#endif
	pthread_join(r, NULL);
	pthread_join(w, NULL);
	/* A last scan: what is disposed of and no longer named is freed. */
	scan(&retirer0);
	assert(nodes[1].job == FREED && nodes[2].job == FREED && "a disposed, unreferenced node was not freed");
	assert(nodes[3].job != FREED && "a linked node was freed");
	assert(atomic_load_explicit(&freed, RLX) == 2 && atomic_load_explicit(&disposed, RLX) == 3);
	return 0;
}

#endif /* WALK */
