from tests.servers.plugin import fake_llm, fake_llm_server  # noqa: F401  (fixtures)
