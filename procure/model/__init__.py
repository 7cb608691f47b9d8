"""The inputs and the cost model: what an offer is and what one successful task costs on it."""
