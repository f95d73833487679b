"""What ``make grade`` runs: the pytest plugin, the loading layer to learner code, targets, results, scoreboard."""
