"""`hub`: the classroom hub on one machine, its configuration, its login and its load test."""
