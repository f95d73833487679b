#!/bin/sh
# The image's entrypoint: keeps the learner's state (/course/.dripstone, a link to exercises/.dripstone) in the
# mounted exercises/, whatever uid runs the container, then runs the command (`make grade` by default).
if [ -d /course/exercises ] && [ ! -w /course/exercises ]; then
    echo "dripstone: uid $(id -u) cannot write to the mounted exercises/ (owned by uid $(stat -c %u /course/exercises)):" \
         "grading runs, but your results and progress are not kept. Run the image as yourself:" \
         "docker run --user \"\$(id -u):\$(id -g)\" ..." >&2
fi
mkdir -p /course/exercises/.dripstone 2>/dev/null || true
exec "$@"
