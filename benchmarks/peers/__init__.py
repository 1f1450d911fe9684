"""Peers of the attnc benchmark: one module per implementation a user would pick instead."""
