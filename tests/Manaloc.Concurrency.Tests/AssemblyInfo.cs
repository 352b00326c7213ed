// One Coyote engine at a time: its runtime takes over task and thread scheduling for the process.
[assembly: CollectionBehavior(DisableTestParallelization = true)]
