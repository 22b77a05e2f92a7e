/*
 * fault.h: failpoints (DESIGN §3.3) on libfiu. A failpoint is a named place in node
 * or simulator code ("module/point") where a fault may be injected. A scenario
 * enables it for one node or all, with an action (crash, error, delay_ms, drop)
 * and either a probability in parts per million or a count of hits.
 *
 * Every decision is made by our RNG: each enabled failpoint is registered with
 * libfiu through fiu_enable_external, and the external callback draws from the
 * fault stream of the node being dispatched ("fault/<proc name>"), so the same
 * seed always fires the same failpoints and one node's draws never move
 * another's. libfiu's random mode and its POSIX wrappers are never used.
 *
 * The failpoints and their names are one table, harness/common/failpoints.h: code
 * names a failpoint by its enum, scenarios and the CLI by its string.
 *
 * Bug switches are not here: see harness/common/bugs.h.
 *
 * Node code asks at the failpoint:
 *     struct sim_fault_hit hit;
 *     switch (flt_check(w, FLT_RAFT_BEFORE_SAVE, &hit)) {
 *     case SIM_FAULT_CRASH: return;  // the process is already dead; unwind
 *     case SIM_FAULT_ERROR: ...; case SIM_FAULT_DELAY: hit.delay_ns ...
 *     default: break; }
 * For SIM_FAULT_CRASH, flt_check has already called sim_proc_kill on the current
 * process (its on_kill runs when the current event returns), so the caller must
 * return without further side effects.
 */
#ifndef FL_FAULT_H
#define FL_FAULT_H

#include "harness/sim/sim.h"

/* Registry of known failpoints (failpoints.h), in its order (for `faultline list
 * failpoints`); flt_failpoint_info(FLT_x) is failpoint x. */
struct flt_info {
    const char *name;        /* "raft/before_save" */
    const char *description; /* one line */
};
size_t flt_failpoint_count(void);
const struct flt_info *flt_failpoint_info(size_t i);
/* The registry entry with that name, or NULL. */
const struct flt_info *flt_failpoint_find(const char *name);

/* Parses "crash" | "error" | "delay" | "delay_ms" | "drop"; false if unknown. */
bool flt_action_parse(const char *s, enum sim_fault *out);
const char *flt_action_str(enum sim_fault a);

struct flt_spec {
    int node; /* process id, or -1 for every process */
    enum sim_fault action;
    int64_t delay_ms; /* for SIM_FAULT_DELAY */
    uint32_t p_ppm;   /* probability per hit; 0 means 1,000,000 (always) */
    uint32_t count;   /* fire at most this many times; 0 = unlimited */
    uint32_t skip;    /* ignore the first `skip` hits (eligible ones) */
};

/* Enables name (must be in the registry) with spec in world w. Enabling the same
 * (name, node) again replaces its spec. Installs the world's fault hook on first
 * use. FL_ENOENT for an unknown name, FL_EINVAL for a bad spec. */
int flt_enable(struct sim_world *w, const char *name, const struct flt_spec *spec);
/* Disables (name, node); node -1 disables the all-nodes entry only. */
int flt_disable(struct sim_world *w, const char *name, int node);
void flt_disable_all(struct sim_world *w);

/* Decides failpoint name for the process being dispatched (sim_current_proc; -1
 * counts as "any node" entries only). Returns the action (SIM_FAULT_NONE when it
 * does not fire) and fills *hit when hit is not NULL. On SIM_FAULT_CRASH the
 * current process has been killed already (see above). Cheap when nothing is
 * enabled. */
enum sim_fault flt_check(struct sim_world *w, enum flt_point fp, struct sim_fault_hit *hit);
/* Same, for an explicit process (e.g. the disk of proc). Does not kill on CRASH;
 * the caller decides. */
enum sim_fault flt_check_proc(struct sim_world *w, int proc, enum flt_point fp,
                              struct sim_fault_hit *hit);

/* Times a failpoint fired in this world (all nodes), for reports and tests. */
uint64_t flt_fired(struct sim_world *w, enum flt_point fp);

#endif
