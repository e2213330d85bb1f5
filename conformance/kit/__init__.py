"""The modelcast conformance kit: a simulator, scenarios and a runner for model-delivery clients."""
