"""Not an attack, a broken submission: merge_online_states was deleted (renamed). That exercise
scores 0 with a message naming it; every other exercise is graded as usual."""

ZERO = ["merge_online_states"]
MESSAGE = "has no `merge_online_states`"

merge_online_states_v2 = merge_online_states
del merge_online_states
