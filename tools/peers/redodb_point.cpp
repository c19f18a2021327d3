// perdure's driver for one benchmark point of RedoDB's PTMs (pramalhe/RedoDB), for `make bench-peers`
// (tools/bench_peers.py; docs/bench/peers.md). It includes RedoDB's public headers and calls their API
// (updateTx/readTx, persist<T>, tmNew, their queue, red-black tree and hash map classes); the loops are
// perdure's own and mirror impl/perdure-ptm/benches/ptm.rs point by point: the same generator and seeds,
// the same pre-fill, the same per-iteration work, the same clock (workers start at a barrier after their
// warm-up, the main thread sleeps for the point's time, each worker times itself, rate = items / the
// longest worker's time).
//
// Build (tools/bench_peers.py does it): g++ -std=c++14 -O3 -I<RedoDB> -I<RedoDB>/ptms -DPWB_IS_CLWB
//   -D<USE_REDOOPT|USE_REDOTIMED|USE_REDO|USE_CXPTM|USE_CXPUC> -DHASH_BUCKETS=2048 [-DMEASURE_PWB]
//   <RedoDB>/common/ThreadRegistry.cpp <the engine's .cpp> redodb_point.cpp -lpthread
// With -DMEASURE_PWB, RedoDB's PWB/PFENCE/PSYNC macros (common/pfences.h) count into the thread-local
// counters defined below; each worker reads its own before it exits and the sums are reported. RedoDB
// counts PFENCE and PSYNC in one counter (and counts a fence where its code relies on a locked CAS).
//
// usage: redodb_point sps   <threads> <secs> <warmup> <swaps per tx>
//        redodb_point queue <threads> <secs> <warmup> <pre-fill>
//        redodb_point tree  <threads> <secs> <warmup> <keys> <update %>
//        redodb_point hash  <threads> <secs> <warmup> <keys> <update %>
// warmup: iterations of the measured loop each thread runs before the clock starts.
// prints: RESULT <workload> <rate> <pwb per tx> <pfence per tx>   (nan nan without -DMEASURE_PWB);
// rate: swaps/s for sps, transactions/s otherwise. Exit status 1 when the structure's check fails.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#if defined(USE_REDOOPT)
#include "pdatastructures/pqueues/RedoOptLinkedListQueue.hpp"
namespace engine = redoopt;
using PTM = redoopt::RedoOpt;
using Queue = RedoOptLinkedListQueue<uint64_t>;
#elif defined(USE_REDOTIMED)
#include "pdatastructures/pqueues/RedoTimedLinkedListQueue.hpp"
namespace engine = redotimed;
using PTM = redotimed::RedoTimed;
using Queue = RedoTimedLinkedListQueue<uint64_t>;
#elif defined(USE_REDO)
#include "pdatastructures/pqueues/RedoLinkedListQueue.hpp"
namespace engine = redo;
using PTM = redo::Redo;
using Queue = RedoLinkedListQueue<uint64_t>;
#elif defined(USE_CXPTM)
#include "pdatastructures/pqueues/CXPTMLinkedListQueue.hpp"
namespace engine = cx;
using PTM = cx::CX;
using Queue = CXPTMLinkedListQueue<uint64_t>;
#elif defined(USE_CXPUC)
#include "ptms/cxpuc/PUCQueue.hpp"
#include "pdatastructures/psequential/PLinkedListQueue.hpp"
// CX-PUC is a universal construction over a sequential object: the queue only (as in perdure's bench).
using Queue = PUCQueue<PLinkedListQueue<uint64_t, cxpuc::Allocator>, uint64_t>;
#else
#error "define one of USE_REDOOPT USE_REDOTIMED USE_REDO USE_CXPTM USE_CXPUC"
#endif

#ifndef USE_CXPUC
#include "pdatastructures/TMHashMap.hpp"
#include "pdatastructures/TMRedBlackTree.hpp"
template <typename T> using Word = engine::persist<T>;
using Tree = TMRedBlackTree<uint64_t, uint64_t, PTM, engine::persist>;
using Hash = TMHashMap<uint64_t, uint64_t, PTM, engine::persist>;
#endif

#ifndef PERDURE_HASH_BUCKETS
#error "define PERDURE_HASH_BUCKETS (the hash set's bucket count, the same as perdure's side)"
#endif

// RedoDB's headers declare these extern under MEASURE_PWB; its PTM sources do not define them.
thread_local uint64_t tl_num_pwbs = 0;
thread_local uint64_t tl_num_pfences = 0;

namespace {

// perdure's bench generator (ptm.rs, `Rng`): xorshift64 13/7/17, seeded per worker the same way.
struct Rng {
    uint64_t s;
    explicit Rng(int worker) : s(0x9E3779B97F4A7C15ULL ^ ((uint64_t)(worker + 1) << 32)) {}
    uint64_t next() {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return s;
    }
    uint64_t below(uint64_t n) { return next() % n; }
};

// What one iteration did: transactions, and items (swaps for SPS, transactions otherwise).
struct Done {
    uint64_t txs, items;
};

struct Tally {
    uint64_t txs = 0, items = 0, pwbs = 0, pfences = 0;
    double secs = 0;
    char pad[64];  // workers write their tallies at exit only, but keep them apart anyway
};

// Runs `iteration(rng)` on `threads` workers: each first runs `warmup` iterations, then waits at the
// start line; the main thread sleeps `secs` and raises the stop flag. Returns the summed tally with the
// longest worker time.
template <typename Iteration>
Tally measure(int threads, double secs, long warmup, Iteration iteration) {
    std::atomic<int> ready{0};
    std::atomic<bool> go{false}, stop{false};
    std::vector<Tally> tallies(threads);
    std::vector<std::thread> workers;
    for (int w = 0; w < threads; w++) {
        workers.emplace_back([&, w] {
            Rng rng(w);
            for (long i = 0; i < warmup; i++) iteration(rng);
            ready.fetch_add(1);
            while (!go.load()) std::this_thread::yield();
            Tally t;
            const uint64_t pwb0 = tl_num_pwbs, pfence0 = tl_num_pfences;
            const auto t0 = std::chrono::steady_clock::now();
            while (!stop.load(std::memory_order_relaxed)) {
                Done d = iteration(rng);
                t.txs += d.txs;
                t.items += d.items;
            }
            t.secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            t.pwbs = tl_num_pwbs - pwb0;
            t.pfences = tl_num_pfences - pfence0;
            tallies[w] = t;
        });
    }
    while (ready.load() < threads) std::this_thread::yield();
    go.store(true);
    std::this_thread::sleep_for(std::chrono::duration<double>(secs));
    stop.store(true);
    for (auto& th : workers) th.join();
    Tally sum;
    for (const Tally& t : tallies) {
        sum.txs += t.txs;
        sum.items += t.items;
        sum.pwbs += t.pwbs;
        sum.pfences += t.pfences;
        if (t.secs > sum.secs) sum.secs = t.secs;
    }
    return sum;
}

void report(const char* workload, const Tally& t) {
#ifdef MEASURE_PWB
    std::printf("RESULT %s %.1f %.4f %.4f\n", workload, t.items / t.secs, (double)t.pwbs / t.txs,
                (double)t.pfences / t.txs);
#else
    std::printf("RESULT %s %.1f nan nan\n", workload, t.items / t.secs);
#endif
}

[[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "redodb_point: %s\n", what);
    std::exit(1);
}

// The queue: pre-filled, then each iteration an enqueue transaction and a dequeue transaction.
// Values are never 0 (RedoDB's queues use T{} as EMPTY).
int queue_point(int threads, double secs, long warmup, long prefill) {
#ifdef USE_CXPUC
    Queue* q = new Queue();  // a volatile handle; the queue itself lives in CX-PUC's persistent replicas
    for (long i = 0; i < prefill; i++) q->enqueue(i + 1, 0);  // CX-PUC: one update per value
#else
    Queue* q = PTM::template updateTx<Queue*>([] { return PTM::template tmNew<Queue>(); });
    PTM::template updateTx<bool>([q, prefill] {  // one transaction, as perdure's pre-fill
        for (long i = 0; i < prefill; i++) q->enqueue(i + 1, 0);
        return true;
    });
#endif
    Tally t = measure(threads, secs, warmup, [q](Rng& rng) {
        q->enqueue(1 + rng.below((1ULL << 40) - 1), 0);
        if (q->dequeue(0) == q->EMPTY) fail("the queue was empty");
        return Done{2, 2};
    });
    long left = 0;
    while (q->dequeue(0) != q->EMPTY) left++;
    if (left != prefill) fail("queue check: the pre-filled count did not survive");
    report("queue", t);
    return 0;
}

#ifndef USE_CXPUC
// SPS: an array of 10^6 persistent words holding a permutation of 0..10^6-1; a transaction swaps `swaps`
// random pairs. The indices are drawn from a seed the closure captures by value: under CX and the Redo
// family the closure may run again, on another replica or by another thread, and must do the same swaps.
int sps_point(int threads, double secs, long warmup, long swaps) {
    const uint64_t len = 1000 * 1000;
    Word<uint64_t>* array = PTM::template updateTx<Word<uint64_t>*>([len] {
        auto* a = (Word<uint64_t>*)PTM::pmalloc(len * sizeof(Word<uint64_t>));
        PTM::put_object(0, a);
        return a;
    });
    for (uint64_t start = 0; start < len; start += 10000) {  // initialised in batches
        PTM::template updateTx<bool>([array, start, len] {
            for (uint64_t i = start; i < start + 10000 && i < len; i++) array[i] = i;
            return true;
        });
    }
    Tally t = measure(threads, secs, warmup, [array, swaps, len](Rng& rng) {
        const uint64_t seed = rng.next() | 1;
        PTM::template updateTx<bool>([array, swaps, len, seed] {
            Rng pick(0);
            pick.s = seed;
            for (long k = 0; k < swaps; k++) {
                const uint64_t i = pick.below(len), j = pick.below(len);
                const uint64_t vi = array[i], vj = array[j];
                array[i] = vj;
                array[j] = vi;
            }
            return true;
        });
        return Done{1, (uint64_t)swaps};
    });
    const bool ok = PTM::template readTx<bool>([array, len] {
        std::vector<bool> seen(len, false);
        for (uint64_t i = 0; i < len; i++) {
            const uint64_t v = array[i];
            if (v >= len || seen[v]) return false;
            seen[v] = true;
        }
        return true;
    });
    if (!ok) fail("SPS check: the array is no longer a permutation");
    report("sps", t);
    return 0;
}

// A set of keys 0..keys-1, pre-filled in transactions of 256 inserts (perdure's BATCH); an iteration is,
// with probability update_pct %, a remove of a random key and, if it was there, its re-insert (two
// transactions, else one), otherwise two lookups of random keys (two read-only transactions).
template <typename Set>
int set_point(const char* workload, Set* set, int threads, double secs, long warmup, long keys, long update_pct) {
    for (long start = 0; start < keys; start += 256) {
        PTM::template updateTx<bool>([set, start, keys] {
            for (long k = start; k < start + 256 && k < keys; k++) set->add(k);
            return true;
        });
    }
    Tally t = measure(threads, secs, warmup, [set, keys, update_pct](Rng& rng) {
        if ((long)rng.below(100) < update_pct) {
            const uint64_t k = rng.below(keys);
            if (set->remove(k)) {
                set->add(k);
                return Done{2, 2};
            }
            return Done{1, 1};
        }
        set->contains(rng.below(keys));
        set->contains(rng.below(keys));
        return Done{2, 2};
    });
    for (long k = 0; k < keys; k++)
        if (!set->contains(k)) fail("set check: a key of the pre-fill is missing");
    report(workload, t);
    return 0;
}
#endif

}  // namespace

int main(int argc, char** argv) {
    if (argc < 6) {
        std::fprintf(stderr, "usage: %s <sps|queue|tree|hash> <threads> <secs> <warmup> <param> [update %%]\n",
                     argv[0]);
        return 2;
    }
    const std::string workload = argv[1];
    const int threads = std::atoi(argv[2]);
    const double secs = std::atof(argv[3]);
    const long warmup = std::atol(argv[4]);
    const long param = std::atol(argv[5]);
    const long update_pct = argc > 6 ? std::atol(argv[6]) : 0;
    if (threads < 1 || secs <= 0 || warmup < 0 || param < 1) {
        std::fprintf(stderr, "redodb_point: bad arguments\n");
        return 2;
    }
    if (workload == "queue") return queue_point(threads, secs, warmup, param);
#ifdef USE_CXPUC
    std::fprintf(stderr, "redodb_point: CX-PUC runs the queue only\n");
    return 2;
#else
    if (workload == "sps") return sps_point(threads, secs, warmup, param);
    if (workload == "tree") {
        Tree* tree = PTM::template updateTx<Tree*>([] { return PTM::template tmNew<Tree>(); });
        return set_point("tree", tree, threads, secs, warmup, param, update_pct);
    }
    if (workload == "hash") {
        Hash* hash = PTM::template updateTx<Hash*>([] { return PTM::template tmNew<Hash>((uint64_t)PERDURE_HASH_BUCKETS); });
        return set_point("hash", hash, threads, secs, warmup, param, update_pct);
    }
    std::fprintf(stderr, "redodb_point: unknown workload %s\n", workload.c_str());
    return 2;
#endif
}
