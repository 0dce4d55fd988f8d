"""Session handling shared by the blog and the admin console."""
