"""One module per lab (its id in lower case), each with WRONG = {task: [answers]}."""
