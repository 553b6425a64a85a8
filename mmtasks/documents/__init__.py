"""Documents: reading benchmark records from local files or the Hugging Face hub, and their images."""
