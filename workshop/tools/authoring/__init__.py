"""What a maintainer writes with: new decks and labs, the attendee copies, talks, the schedule."""
