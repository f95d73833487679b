#!/usr/bin/env bash
# `make image-check`: build docker/Dockerfile for real on a machine without a Docker engine or a registry, and
# grade the course inside the image. Run as root on Linux x86_64 (Debian or Ubuntu) that reaches PyPI and the
# Ubuntu archive; ~20-40 min on 2 cores the first time (the CUDA wheels are ~3 GB), minutes when cached.
#
#  1. tools     buildah, podman, runc, debootstrap and Ubuntu's archive keyring, from Debian, when missing
#  2. base      a stand-in for the base image: `debootstrap --variant=minbase` of the base's Ubuntu release from
#               the Ubuntu archive, its Release file verified with ubuntu-keyring, imported as $STANDIN
#  3. build     the project's own docker/Dockerfile, unchanged but for --build-arg BASE=$STANDIN (the one seam);
#               --format docker (the OCI format drops SHELL); pip in the build gets this machine's CA bundle
#               through a mounted /etc/pip.conf (never baked into the image)
#  4. doctor    `make doctor` inside the image: no `fail`, a final Python
#  5. grade     `make grade TARGET=solutions` inside the image and outside it, on this clone: full marks, and
#               nothing pending GPU but the declared GPU-only tests (tier gpu_perf, counted)
#  6. mount     a learner whose uid is not 1000: exercises/ mounted, `--user UID:GID`; the results and
#               .dripstone/last.json land in the mount, owned by that uid, and `make progress` reads them back
#  7. batch     docker/compose.yaml's batch service by hand: root, no network, the documented capabilities;
#               `make doctor` reports isolation bwrap, and a one-student batch grades in a bwrap sandbox
#
# It prints each step's time, the image's size and layers, and the scores. Exit status 0 when every step passes.
# Environment: IMAGE (tag to build, default localhost/dripstone:check), IMAGE_CHECK_CACHE (debootstrap roots and
# logs, default /var/cache/dripstone-image-check), IMAGE_CHECK_UNIT (grade one unit instead of all: a quick run).
set -euo pipefail

cd "$(dirname "$0")/.."
REPO=$PWD
IMAGE=${IMAGE:-localhost/dripstone:check}
CACHE=${IMAGE_CHECK_CACHE:-/var/cache/dripstone-image-check}
UNIT=${IMAGE_CHECK_UNIT:-}
KEYRING=/usr/share/keyrings/ubuntu-archive-keyring.gpg
MIRROR=http://archive.ubuntu.com/ubuntu
LEARNER_UID=${IMAGE_CHECK_UID:-4321}
# Tests that only a GPU grades: every test of tier gpu_perf (pending GPU here). Any other pending test fails.
GPU_ONLY_TIERS="gpu_perf"
# The capabilities docker/compose.yaml and docker/README.md give the batch service (bwrap's namespaces need
# SYS_ADMIN, its private loopback NET_ADMIN; the default seccomp and AppArmor profiles refuse its mounts).
BATCH_CAPS=(--cap-add SYS_ADMIN --cap-add NET_ADMIN --security-opt seccomp=unconfined --security-opt apparmor=unconfined)

STORAGE=(--storage-driver overlay)
# runc (crun refuses hybrid cgroups), cgroupfs, and explicit rlimits no higher than this shell's: podman's
# defaults (1048576 files) are refused where root lacks CAP_SYS_RESOURCE, as in a container or a sandboxed VM.
NOFILE=$(ulimit -Hn); [ "$NOFILE" = unlimited ] || [ "$NOFILE" -gt 65536 ] && NOFILE=65536
RUN=(podman "${STORAGE[@]}" --cgroup-manager cgroupfs --events-backend file run --rm --runtime runc
     --network none --ulimit "nofile=$NOFILE:$NOFILE" --ulimit nproc=16384:16384)

WORK=$(mktemp -d /tmp/image-check.XXXXXX)
chmod 755 "$WORK"
declare -a SUMMARY=()
FAILED=0
T0=$SECONDS

say() { printf '\n== %s\n' "$*"; }
step() {  # step NAME FUNCTION: runs it, times it, records pass/fail
    local name=$1 start=$SECONDS rc=0
    say "$name"
    "$2" || rc=$?
    local took=$((SECONDS - start))
    if [ "$rc" -eq 0 ]; then SUMMARY+=("$(printf '%-8s pass  %5ss' "$name" "$took")")
    else SUMMARY+=("$(printf '%-8s FAIL  %5ss  (exit %s)' "$name" "$took" "$rc")"); FAILED=1; fi
    return 0
}

[ "$(id -u)" -eq 0 ] || { echo "image-check: run as root (buildah and podman here run rootful)"; exit 2; }

# The base image and its Ubuntu release, from the Dockerfile's ARG BASE default.
BASE_DEFAULT=$(sed -n 's/^ARG BASE=//p' docker/Dockerfile | head -1)
case "$BASE_DEFAULT" in
    *ubuntu24.04*) SUITE=noble ;;
    *ubuntu22.04*) SUITE=jammy ;;
    *) echo "image-check: no stand-in known for base $BASE_DEFAULT"; exit 2 ;;
esac
STANDIN=localhost/dripstone-base-standin:$SUITE

tools() {
    local missing=()
    for t in buildah podman runc debootstrap; do command -v "$t" >/dev/null || missing+=("$t"); done
    [ -x /usr/libexec/podman/catatonit ] || missing+=(catatonit)  # `--init`, as compose's `init: true`
    if [ ${#missing[@]} -gt 0 ]; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
    if [ ! -s "$KEYRING" ]; then
        # Debian 12 has no ubuntu-keyring; Debian 13 does: fetch that one package through apt (signature
        # checked against Debian's own keyring), with a private source list that leaves the host's apt alone.
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ubuntu-keyring >/dev/null 2>&1 || {
            local d=$CACHE/apt-trixie
            mkdir -p "$d/lists/partial" "$d/cache/archives/partial"
            echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" >"$d/sources.list"
            local opts=(-o "Dir::Etc::SourceList=$d/sources.list" -o Dir::Etc::SourceParts=/nonexistent
                        -o "Dir::State::Lists=$d/lists" -o "Dir::Cache=$d/cache")
            apt-get "${opts[@]}" update -qq
            (cd "$d" && apt-get "${opts[@]}" download ubuntu-keyring 2>/dev/null)
            dpkg -i "$d"/ubuntu-keyring_*_all.deb >/dev/null
        }
    fi
    buildah --version; podman --version; runc --version | head -1; debootstrap --version
    gpg --show-keys --with-colons "$KEYRING" 2>/dev/null | awk -F: '$1=="fpr"{print "archive key: " $10}' | head -3 || true
}

base() {
    if podman "${STORAGE[@]}" image exists "$STANDIN"; then
        echo "stand-in $STANDIN already built: $(podman "${STORAGE[@]}" image inspect --format '{{.Id}}' "$STANDIN")"
        return 0
    fi
    local root=$CACHE/$SUITE-root
    mkdir -p "$CACHE"
    if [ ! -e "$root/.complete" ]; then
        rm -rf "$root"
        # --keyring: debootstrap refuses a Release file not signed by Ubuntu's archive key.
        debootstrap --variant=minbase --keyring="$KEYRING" "$SUITE" "$root" "$MIRROR" \
            /usr/share/debootstrap/scripts/gutsy >"$CACHE/debootstrap-$SUITE.log" 2>&1 \
            || { tail -20 "$CACHE/debootstrap-$SUITE.log"; return 1; }
        touch "$root/.complete"
    fi
    grep -h "Valid Release signature" "$CACHE/debootstrap-$SUITE.log" || { echo "no verified Release signature"; return 1; }
    # The real base's apt sources: main, restricted, universe, with -updates and -security.
    printf 'deb %s %s main restricted universe\ndeb %s %s-updates main restricted universe\ndeb %s %s-security main restricted universe\n' \
        "$MIRROR" "$SUITE" "$MIRROR" "$SUITE" "$MIRROR" "$SUITE" >"$root/etc/apt/sources.list"
    tar -C "$root" --exclude=./.complete --exclude='./var/cache/apt/archives/*.deb' -c . \
        | podman "${STORAGE[@]}" import --change 'CMD ["/bin/bash"]' - "$STANDIN"
}

build() {
    printf '[global]\ncert = /etc/dripstone-build-ca.crt\n' >"$WORK/pip.conf"
    local ca=/etc/ssl/certs/ca-certificates.crt
    buildah "${STORAGE[@]}" bud --isolation chroot --format docker --pull=never --layers \
        --build-arg "BASE=$STANDIN" \
        -v "$WORK/pip.conf:/etc/pip.conf:ro" -v "$ca:/etc/dripstone-build-ca.crt:ro" \
        -f docker/Dockerfile -t "$IMAGE" . >"$WORK/build.log" 2>&1
    local rc=$?
    grep -E '^STEP|^COMMIT|rror|WARN' "$WORK/build.log" | cut -c1-200 || true
    if grep -q "SHELL is not supported" "$WORK/build.log"; then echo "SHELL dropped: build with --format docker"; return 1; fi
    [ "$rc" -eq 0 ] || { tail -30 "$WORK/build.log"; return "$rc"; }
}

size() {
    local bytes
    bytes=$(podman "${STORAGE[@]}" image inspect --format '{{.Size}}' "$IMAGE")
    IMAGE_SIZE=$(awk -v b="$bytes" 'BEGIN{printf "%.2f GB", b/1e9}')
    echo "image $IMAGE: $IMAGE_SIZE"
    podman "${STORAGE[@]}" history --format '{{.Size}}\t{{.CreatedBy}}' "$IMAGE" | cut -c1-150 | head -12
    echo "largest in the make env layer (MB):"
    "${RUN[@]}" --entrypoint sh "$IMAGE" -c \
        'cd .venv/lib/python3*/site-packages && du -sm * | sort -rn | head -12; du -sm /course/.venv'
}

doctor() {
    "${RUN[@]}" "$IMAGE" make doctor | tee "$WORK/doctor.txt"
    local rc=${PIPESTATUS[0]}
    DOCTOR=$(tail -1 "$WORK/doctor.txt")
    grep -E '^  (fail|warn)' "$WORK/doctor.txt" || true
    [ "$rc" -eq 0 ] && ! grep -qE '^  fail' "$WORK/doctor.txt"
}

# scores CSV: "score/max, N pending (gpu_perf M), pending elsewhere K, not full F"; 0 when the run passes
scores() {
    python3 - "$1" "$GPU_ONLY_TIERS" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
gpu_only = set(sys.argv[2].split())
counted = [r for r in rows if r["status"] != "pending_gpu"]
score = sum(float(r["score"]) for r in counted)
full = sum(float(r["max_score"]) for r in counted)
pending = [r for r in rows if r["status"] == "pending_gpu"]
stray = [r for r in pending if r["tier"] not in gpu_only]
lost = [r for r in counted if float(r["score"]) < float(r["max_score"])]
print(f"{score:g}/{full:g}; {len(rows)} tests; {len(pending)} pending GPU, all GPU-only: {not stray} "
      f"({len(pending) - len(stray)} of tier {'/'.join(sorted(gpu_only))})")
for r in stray:
    print(f"  pending but not GPU-only: {r['unit']} {r['exercise']} {r['tier']} {r['test']}")
for r in lost:
    print(f"  lost {float(r['max_score']) - float(r['score']):g}: {r['unit']} {r['exercise']} {r['test']}: {r['message'][:160]}")
sys.exit(1 if stray or lost else 0)
EOF
}

grade_args() { echo "TARGET=solutions${UNIT:+ L=$UNIT}"; }

grade_outside() {  # started in the background during the build: same clone, this machine's venv
    # shellcheck disable=SC2046
    local start=$SECONDS
    make grade $(grade_args) ARGS="--csv $WORK/outside.csv" >"$WORK/outside.log" 2>&1 && rc=0 || rc=$?
    echo "$((SECONDS - start))" >"$WORK/outside.time"
    echo "$rc" >"$WORK/outside.rc"
}

grade() {
    mkdir -p "$WORK/out" && chmod 777 "$WORK/out"
    local start=$SECONDS
    # shellcheck disable=SC2046
    "${RUN[@]}" -v "$WORK/out:/out" "$IMAGE" make grade $(grade_args) ARGS="--csv /out/inside.csv" \
        >"$WORK/inside.log" 2>&1 || true
    local took=$((SECONDS - start))
    tail -5 "$WORK/inside.log"
    local rc=0
    if grep -q "pip install" "$WORK/inside.log"; then echo "make grade ran pip in the image: the install stamp is stale"; rc=1; fi
    INSIDE=$(scores "$WORK/out/inside.csv") || rc=1
    INSIDE="$INSIDE [${took}s]"
    echo "inside the image:  $INSIDE"
    while [ ! -e "$WORK/outside.rc" ]; do sleep 5; done
    OUTSIDE="$(scores "$WORK/outside.csv" || true) [$(cat "$WORK/outside.time")s]"
    echo "outside, this clone: $OUTSIDE"
    return $rc
}

mount_round_trip() {  # a learner whose uid is not 1000 mounts exercises/ and runs as themselves
    local ex=$WORK/learner/exercises
    mkdir -p "$WORK/learner"
    cp -r "$REPO/solutions" "$ex"
    chown -R "$LEARNER_UID:$LEARNER_UID" "$WORK/learner"
    local unit=${UNIT:-23}
    "${RUN[@]}" --user "$LEARNER_UID:$LEARNER_UID" -v "$ex:/course/exercises" "$IMAGE" \
        make grade L="$unit" ARGS="--csv exercises/results.csv" >"$WORK/mount.log" 2>&1 || { tail -20 "$WORK/mount.log"; return 1; }
    "${RUN[@]}" --user "$LEARNER_UID:$LEARNER_UID" -v "$ex:/course/exercises" "$IMAGE" \
        make progress >"$WORK/progress.log" 2>&1 || { tail -20 "$WORK/progress.log"; return 1; }
    # Without --user (uid 1000 here): the entrypoint says how to keep the results, before any traceback.
    "${RUN[@]}" -v "$ex:/course/exercises" "$IMAGE" true 2>&1 | grep "cannot write to the mounted exercises" \
        || { echo "no warning for a uid that cannot write the mount"; return 1; }
    if grep -q Traceback "$WORK/mount.log" "$WORK/progress.log"; then grep -h -A3 Traceback "$WORK"/*.log; return 1; fi
    stat -c '%u %n' "$ex/results.csv" "$ex/.dripstone/last.json"
    [ "$(stat -c %u "$ex/results.csv")" = "$LEARNER_UID" ] && [ "$(stat -c %u "$ex/.dripstone/last.json")" = "$LEARNER_UID" ] \
        && grep -q "$unit" "$ex/.dripstone/last.json" && echo "results and progress kept in the mount for uid $LEARNER_UID"
}

batch() {  # compose.yaml's batch service: root, no network, the documented capabilities (no --gpus: no GPU here)
    local subs=$WORK/submissions out=$WORK/batch-out unit=${UNIT:-23}
    mkdir -p "$subs/alice" "$out"
    cp -r "$REPO/solutions/$(cd "$REPO/solutions" && ls -d "l${unit#l}"* | head -1)" "$subs/alice/"
    "${RUN[@]}" --user 0:0 --init --pids-limit 4096 "${BATCH_CAPS[@]}" -e DRIPSTONE_SANDBOX_VENV=/course/.venv \
        "$IMAGE" make doctor >"$WORK/batch-doctor.txt" 2>&1 || true
    grep -E 'isolation|bwrap' "$WORK/batch-doctor.txt" | head -4
    grep -qE '^  ok +isolation +available: bwrap' "$WORK/batch-doctor.txt" || return 1
    "${RUN[@]}" --user 0:0 --init --pids-limit 4096 "${BATCH_CAPS[@]}" -e DRIPSTONE_SANDBOX_VENV=/course/.venv \
        -v "$subs:/submissions:ro" -v "$out:/out" "$IMAGE" \
        python -m grader batch /submissions --out /out --unit "$unit" >"$WORK/batch.log" 2>&1 || { tail -20 "$WORK/batch.log"; return 1; }
    tail -4 "$WORK/batch.log"
    grep -q "isolation=bwrap" "$WORK/batch.log" || { echo "batch did not grade with bwrap isolation"; return 1; }
    cat "$out/grades.csv" 2>/dev/null | head -3
}

step tools tools
step base base
grade_outside &
step build build
step size size
step doctor doctor
step grade grade
step mount mount_round_trip
step batch batch
wait

say "image-check summary ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, base stand-in $STANDIN for $BASE_DEFAULT)"
printf '%s\n' "${SUMMARY[@]}"
echo "total    $((SECONDS - T0))s"
echo "image    ${IMAGE_SIZE:-?}"
echo "doctor   ${DOCTOR:-?}"
echo "inside   ${INSIDE:-?}"
echo "outside  ${OUTSIDE:-?}"
echo "logs     $WORK"
exit $FAILED
