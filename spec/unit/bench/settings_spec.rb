# frozen_string_literal: true

require_relative '../../../bench/lib/clone_army_bench/settings'

describe CloneArmyBench::Settings do
  def settings(env = {})
    described_class.from_env(env)
  end

  it 'takes the defaults the bench has always had' do
    expect(settings.to_h).to include(bench: 'fleet', clones: 500, runinterval: 1800, ramp_up: 300, k: 3, cpu_reps: 5,
                                     noop_reps: 5, start_timeout: 620, apply_timeout: 1800, exec_timeout: 600,
                                     grow_batch: 100, grow_runinterval: 86_400, server_addr: '127.0.0.5',
                                     server_name: 'puppet', dry_run: false)
  end

  it 'gives a small fleet the shortest interval clone-army takes, and a large one 3.6 s per clone' do
    expect(settings('CLONES' => '10').runinterval).to eq(60)
    expect(settings('CLONES' => '1000').runinterval).to eq(3600)
    expect(settings('CLONES' => '10').start_timeout).to eq(130)
  end

  it 'plans the fleet in steps of 50, 100 and 40 more, none above CLONES' do
    expect(settings.fleet_steps).to eq([50, 100, 140, 500])
    expect(settings('CLONES' => '120').fleet_steps).to eq([50, 100, 120, 120])
    expect(settings('CLONES' => '40').fleet_steps).to eq([40, 40, 40, 40])
  end

  it 'grows in batches of GROW_BATCH up to CLONES' do
    expect(settings('CLONES' => '250').batches).to eq([[1, 100], [101, 200], [201, 250]])
  end

  {
    { 'BENCH' => 'fleets' } => "BENCH must be fleet or growth, not 'fleets'",
    { 'CLONES' => '0' } => "CLONES must be a positive number, not '0'",
    { 'CLONES' => '5e2' } => "CLONES must be a positive number, not '5e2'",
    { 'K' => '' } => "K must be a positive number, not ''",
    { 'CPU_REPS' => '2' } => "CPU_REPS must be at least 3 (the runs a median is taken of), not '2'",
    { 'NOOP_REPS' => '1' } => "NOOP_REPS must be at least 3 (the runs a median is taken of), not '1'",
    { 'RAMP_UP' => '-1' } => "RAMP_UP must be a number of seconds, not '-1'",
    { 'RUNINTERVAL' => '59' } => "RUNINTERVAL must be at least 60 (clone-army's minimum), not '59'",
    { 'GROW_RUNINTERVAL' => '30' } => "GROW_RUNINTERVAL must be at least 60 (clone-army's minimum), not '30'",
    { 'START_TIMEOUT' => 'soon' } => "START_TIMEOUT must be a positive number, not 'soon'",
    { 'APPLY_TIMEOUT' => '0' } => "APPLY_TIMEOUT must be a positive number, not '0'",
    { 'EXEC_TIMEOUT' => '1h' } => "EXEC_TIMEOUT must be a positive number, not '1h'",
    { 'BENCH_DRY_RUN' => 'yes' } => "BENCH_DRY_RUN must be 1 (a dry run), 0 or empty, not 'yes'",
  }.each do |env, message|
    it "refuses #{env.keys.first}=#{env.values.first.inspect}, naming it and what it takes" do
      expect { settings(env) }.to raise_error(CloneArmyBench::Refused, message)
    end
  end

  it 'takes a dry run only from BENCH_DRY_RUN=1' do
    expect([nil, '', '0', '1'].map { |v| settings('BENCH_DRY_RUN' => v).dry_run }).to eq([false, false, false, true])
  end
end
