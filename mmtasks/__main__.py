from mmtasks.cli import entry

entry()
