"""Alembic environment: run the migrations on the connection backend/store/migrate.py hands over."""

from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=None, version_table="ragline_schema_version")
with context.begin_transaction():
    context.run_migrations()
