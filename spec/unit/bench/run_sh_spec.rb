# frozen_string_literal: true

require 'open3'

# bench/run.sh's settings and plan, without a sandbox: BENCH_DRY_RUN=1 checks the
# settings and prints what the run would do.
describe 'bench/run.sh' do
  run_sh = File.expand_path('../../../bench/run.sh', __dir__)

  def dry_run(run_sh, env)
    Open3.capture3({ 'BENCH_DRY_RUN' => '1' }.merge(env), 'bash', run_sh)
  end

  it 'plans the fleet in its steps, none above CLONES, and tears down at the end' do
    out, err, status = dry_run(run_sh, 'CLONES' => '500')
    expect([status.exitstatus, err]).to eq([0, ''])
    expect(out).to include('puppet apply num_clones => 50,', 'puppet apply num_clones => 100,', 'create-fleet … 101 140 1800',
                           'num_clones => 500, ramp_up => 300')
    expect(out.lines.last).to eq("would run: sandbox.sh down bench\n")
  end

  it 'leaves out the steps a small fleet does not reach' do
    out, = dry_run(run_sh, 'CLONES' => '40')
    expect(out).not_to include('create-fleet', 'num_clones => 50,')
  end

  it 'plans a growth in batches up to CLONES' do
    out, = dry_run(run_sh, 'BENCH' => 'growth', 'CLONES' => '250')
    expect(out.scan(%r{create-fleet … (\d+) (\d+) 86400}).map { |a, b| [a.to_i, b.to_i] }).to eq([[1, 100], [101, 200], [201, 250]])
  end

  ['CPU_REPS', 'NOOP_REPS'].each do |reps|
    it "refuses #{reps} below the runs a median is taken of, naming it, before anything runs" do
      out, err, status = dry_run(run_sh, reps => '2')
      expect(status.exitstatus).not_to eq(0)
      expect(out).to eq('')
      expect(err).to include("#{reps} must be at least 3")
    end
  end
end
