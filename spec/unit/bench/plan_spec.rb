# frozen_string_literal: true

require 'open3'
require_relative '../../../bench/lib/clone_army_bench/plan'
require_relative '../../../bench/lib/clone_army_bench/settings'

# BENCH_DRY_RUN=1: the settings checked and the plan printed, nothing run.
describe CloneArmyBench::Plan do
  names = { bench: 'bench', plain: 'benchplain' }
  out = { json: 'R/S.json', md: 'R/S.md', raw: 'R/S.raw', page: 'R/S.html' }

  def plan(env, names, out)
    described_class.lines(CloneArmyBench::Settings.from_env(env), names, out)
  end

  it 'plans the CPU comparison alone beside no fleet with BENCH=cpu' do
    expect(plan({ 'BENCH' => 'cpu' }, names, out)).to eq(<<~PLAN.lines.map(&:chomp))
      bench cpu, CLONES=0 RUNINTERVAL=60 RAMP_UP=300 K=3 CPU_REPS=5 NOOP_REPS=5 SERVER_ADDR=127.0.0.5
      would run: sandbox.sh down benchplain
      would run: sandbox.sh down bench
      would run: sandbox.sh up bench
      would run: sandbox.sh server bench
      would run: puppet apply (in bench): class clone_army, num_clones => 0, record => true
      would run: clone-army clone create benchcpu (manual)
      would run: site.pp: clone_army::workload for benchcpu and benchplain, an empty catalog for every other node
      would run: sandbox.sh up benchplain
      would run: 5 agent runs each in benchcpu with the fact cache and without (its facter.conf set aside), on benchplain and on bench, after a warm-up each
      would run: sandbox.sh down benchplain
      would write: R/S.json
      would write: R/S.md
      would write: R/S.raw/
      would write: R/S.html
      would run: sandbox.sh down benchplain
      would run: sandbox.sh down bench
    PLAN
  end

  it 'plans the fleet in its steps, every command in order, and tears down at the end' do
    expect(plan({ 'CLONES' => '500' }, names, out)).to eq(<<~PLAN.lines.map(&:chomp))
      bench fleet, CLONES=500 RUNINTERVAL=1800 RAMP_UP=300 K=3 CPU_REPS=5 NOOP_REPS=5 SERVER_ADDR=127.0.0.5
      would run: sandbox.sh down benchplain
      would run: sandbox.sh down bench
      would run: sandbox.sh up bench
      would run: sandbox.sh server bench
      would run: puppet apply (in bench): class clone_army, num_clones => 0, record => true
      would run: puppet apply num_clones => 50, then 5 timed no-op applies each beside puppet apply -e ''
      would run: puppet apply num_clones => 100, then 5 timed no-op applies each beside puppet apply -e ''
      would run: inside.sh create-fleet … 101 140 1800; clone-army clone start; inside.sh wait-booted
      would run: puppet apply num_clones => 500, ramp_up => 300 (the runs watched every 15 s from here)
      would run: clone-army clone create benchd1..benchd3 (3 daemon-mode clones)
      would run: clone-army clone create benchcpu (manual)
      would run: site.pp: clone_army::workload for benchcpu and benchplain, an empty catalog for every other node
      would run: sandbox.sh up benchplain
      would run: 5 agent runs each in benchcpu with the fact cache and without (its facter.conf set aside), on benchplain and on bench, after a warm-up each
      would run: sandbox.sh down benchplain
      would run: inside.sh pss (daemon and fleet clones); the check-ins counted for 1800 s + 60 s; clone-army report --server
      would run: the phasing read over the next interval (1800 s)
      would write: R/S.json
      would write: R/S.md
      would write: R/S.raw/
      would write: R/S.html
      would run: sandbox.sh down benchplain
      would run: sandbox.sh down bench
    PLAN
  end

  it 'leaves out the steps a small fleet does not reach' do
    lines = plan({ 'CLONES' => '40' }, names, out)
    expect(lines.grep(%r{create-fleet|num_clones => 50,|num_clones => 100,})).to eq([])
    expect(lines).to include("would run: puppet apply num_clones => 40, then 5 timed no-op applies each beside puppet apply -e ''")
  end

  it 'plans a growth in batches up to CLONES' do
    lines = plan({ 'BENCH' => 'growth', 'CLONES' => '250' }, names, out)
    expect(lines.grep(%r{create-fleet})).to eq(
      [[1, 100], [101, 200], [201, 250]].map do |first, last|
        "would run: inside.sh create-fleet … #{first} #{last} 86400; clone-army clone start clone#{first}..clone#{last}; " \
          'inside.sh wait-booted'
      end,
    )
    expect(lines).to include('would run: inside.sh pss clone1..clone250')
  end

  it 'plans the checkin bench: one apply of the fleet, the runs watched and sampled, bounded' do
    env = { 'BENCH' => 'checkin', 'CLONES' => '20', 'RUNINTERVAL' => '300', 'SERVER_ADDR' => '127.0.0.34' }
    expect(plan(env, names, out)).to eq(<<~PLAN.lines.map(&:chomp))
      bench checkin, CLONES=20 RUNINTERVAL=300 RAMP_UP=300 SPLAY=0 SAMPLE_EVERY=60 WATCH_EVERY=60 RUN_TIMEOUT=5000 SERVER_ADDR=127.0.0.34
      would run: sandbox.sh down benchplain
      would run: sandbox.sh down bench
      would run: sandbox.sh up bench
      would run: sandbox.sh server bench
      would run: puppet apply (in bench): class clone_army, num_clones => 0, record => true
      would run: the runs watched every 60 s (clone-army report), CPU and the recorder's timeline sampled every 60 s (inside.sh cpu-split), into the raw directory as they come
      would run: puppet apply num_clones => 20, runinterval => 300, ramp_up => 300, splay => 0 (and record_puppetdb where the suite has PuppetDB), until all run
      would run: the check-ins watched until every clone's run of the next interval is in, at most 840 s after all run; the whole run ends by RUN_TIMEOUT (5000 s)
      would write: R/S.json
      would write: R/S.md
      would write: R/S.raw/
      would write: R/S.html
      would run: sandbox.sh down benchplain
      would run: sandbox.sh down bench
    PLAN
  end

  describe 'bench.rb run' do
    bench_rb = File.expand_path('../../../bench/bench.rb', __dir__)

    it 'prints the plan with BENCH_DRY_RUN=1 and starts nothing' do
      stdout, stderr, status = Open3.capture3({ 'BENCH_DRY_RUN' => '1', 'CLONES' => '40', 'SERVER_ADDR' => '127.0.0.9' },
                                              'ruby', bench_rb, 'run')
      expect([status.exitstatus, stderr]).to eq([0, ''])
      expect(stdout.lines.first)
        .to eq("bench fleet, CLONES=40 RUNINTERVAL=144 RAMP_UP=300 K=3 CPU_REPS=5 NOOP_REPS=5 SERVER_ADDR=127.0.0.9\n")
      expect(stdout.lines.last).to eq("would run: sandbox.sh down bench\n")
    end

    it 'prints the checkin plan with BENCH_DRY_RUN=1 from start too, and starts nothing' do
      stdout, stderr, status = Open3.capture3({ 'BENCH_DRY_RUN' => '1', 'BENCH' => 'checkin' }, 'ruby', bench_rb, 'start')
      expect([status.exitstatus, stderr]).to eq([0, ''])
      expect(stdout.lines.first).to start_with('bench checkin, CLONES=1000 RUNINTERVAL=3600 RAMP_UP=300 SPLAY=0 ')
    end

    ['CPU_REPS', 'NOOP_REPS'].each do |reps|
      it "refuses #{reps} below the runs a median is taken of, naming it, before anything runs" do
        stdout, stderr, status = Open3.capture3({ 'BENCH_DRY_RUN' => '1', reps => '2' }, 'ruby', bench_rb, 'run')
        expect([status.exitstatus, stdout]).to eq([2, ''])
        expect(stderr).to include("#{reps} must be at least 3")
      end
    end
  end
end
