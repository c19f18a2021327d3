/*
 * GenMC model of RELAX's `read_nvmm` against the EMULATED 16-byte CAS (issue 16's known finding).
 *
 * Models:
 *   impl/perdure-relax/src/patomic.rs, `Space::read_nvmm` (Algorithm 4.1 L5-L7): sequence, value,
 *     sequence as three SeqCst 8-byte loads of the NVMM replica, retried until the two sequence
 *     loads agree (the retry has no side effect, so the model takes one round and assumes it
 *     agreed: GenMC's usual treatment of a spin loop);
 *   impl/perdure-pm/src/dword.rs, `emulated::cas16` (used off x86_64 and under loom and shuttle):
 *     under one global lock, Acquire loads of both words, then Release stores of the value word
 *     (words[0]) and then of the sequence word (words[1]);
 *   impl/perdure-relax/src/dram.rs, `DramReplica::read_pair`'s non-x86 path (-DCAS_LOAD): the pair
 *     read as a 16-byte CAS-load, cas16(words, 0, 0), under the same lock.
 *
 * Client (2 threads): the field holds (value, seq) = (0, 0);
 *   writer  mirror_cas's L37-L40 step: cas16 (0, 0) -> (1, 1);
 *   reader  read_nvmm (or, with CAS_LOAD, read_pair's CAS-load).
 *
 * Invariant: the reader returns a pair the field held: (0, 0) or (1, 1).
 *
 * Expected result: read_nvmm VIOLATES it under every model, SC included: the reader loads seq 0,
 * the writer stores value 1, the reader loads value 1 and seq 0 again, before the writer's
 * sequence store -- the new value with the old sequence. The emulation is atomic only against
 * other 16-byte operations (dword.rs says so), and read_nvmm mixes 8-byte loads with it. The rows
 * genmc:relax-read-nvmm-torn/* pass only while GenMC reports that torn pair: they are the
 * finding's regression model until read_nvmm gets a path like read_pair's (then the row flips to
 * an expected pass). On x86_64 the real `lock cmpxchg16b` is one event to 8-byte loads and the
 * finding does not apply. The CAS-load variant (rows genmc:relax-read-pair-cas-load/*) passes.
 *
 * genmc-row: relax-read-nvmm-torn violates=rc11,imm,tso
 * genmc-row: relax-read-pair-cas-load -DCAS_LOAD
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

#include <genmc.h> /* __VERIFIER_assume */

atomic_ulong words[2];          /* words[0] = value (lower address), words[1] = sequence */
pthread_mutex_t cas16_lock = PTHREAD_MUTEX_INITIALIZER;

/* dword.rs: emulated::cas16 (value = words[0], sequence = words[1]) */
bool cas16(uint64_t cur_v, uint64_t cur_s, uint64_t new_v, uint64_t new_s, uint64_t *seen_v,
	   uint64_t *seen_s)
{
	pthread_mutex_lock(&cas16_lock);
	uint64_t v = atomic_load_explicit(&words[0], ACQ); /* rust: cas16 load Acquire */
	uint64_t s = atomic_load_explicit(&words[1], ACQ); /* rust: cas16 load Acquire */
	bool ok = v == cur_v && s == cur_s;
	if (ok) {
		atomic_store_explicit(&words[0], new_v, REL); /* rust: cas16 store Release */
		atomic_store_explicit(&words[1], new_s, REL); /* rust: cas16 store Release */
	}
	pthread_mutex_unlock(&cas16_lock);
	*seen_v = v;
	*seen_s = s;
	return ok;
}

/* patomic.rs: Space::read_nvmm (one round of the loop, assumed untorn by its own check) */
void read_nvmm(uint64_t *v, uint64_t *s)
{
	uint64_t s1 = atomic_load_explicit(&words[1], SC); /* rust: read_nvmm load SeqCst */
	uint64_t v1 = atomic_load_explicit(&words[0], SC); /* rust: read_nvmm load SeqCst */
	uint64_t s2 = atomic_load_explicit(&words[1], SC); /* rust: read_nvmm load SeqCst */
	__VERIFIER_assume(s1 == s2);
	*v = v1;
	*s = s1;
}

/* dram.rs: DramReplica::read_pair, the non-x86 path: a 16-byte CAS-load */
void read_pair_cas_load(uint64_t *v, uint64_t *s) { cas16(0, 0, 0, 0, v, s); }

void *writer(void *arg)
{
	uint64_t sv, ss;
	bool ok = cas16(0, 0, 1, 1, &sv, &ss);
	assert(ok);
	return NULL;
}

void *reader(void *arg)
{
	uint64_t v, s;
#ifdef CAS_LOAD
	read_pair_cas_load(&v, &s);
#else
	read_nvmm(&v, &s);
#endif
	assert(((v == 0 && s == 0) || (v == 1 && s == 1)) && "a torn (value, sequence) pair");
	return NULL;
}

int main(void)
{
	pthread_t w, r;
	pthread_create(&w, NULL, writer, NULL);
	pthread_create(&r, NULL, reader, NULL);
	pthread_join(w, NULL);
	pthread_join(r, NULL);
	return 0;
}
