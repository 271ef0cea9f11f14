"""Wire messages and codec shared by server and client (to come with the race server)."""
