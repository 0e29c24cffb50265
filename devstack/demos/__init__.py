"""The demos `make run` sets up beside the demo event: appointment slots, parking."""
