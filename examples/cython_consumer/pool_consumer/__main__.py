"""`python -m pool_consumer`: run the self-check against dnnpool's Python API."""
from pool_consumer.check import main

main()
