"""What procure concludes from an evaluated workspace: ranking, uncertainty, horizon, plan, hedge, evidence."""
