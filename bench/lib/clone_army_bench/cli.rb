# frozen_string_literal: true

require 'json'
require_relative 'stats'
require_relative 'pss'
require_relative 'runs'
require_relative 'results'
require_relative 'derive'
require_relative 'pages'
require_relative 'driver'
require_relative 'detached'
require_relative 'across'

module CloneArmyBench
  # bench/bench.rb's verbs (listed there). Readings come on stdin, figures go to
  # stdout; a wrong call is an error naming the verb and what it takes, exit 2.
  class Cli
    USAGE = {
      'min-runs' => '', 'median' => '< NUMBERS', 'median-any' => '< NUMBERS', 'quote' => 'RUN...',
      'ratio' => 'NUM DEN NAME NAME', 'slope' => 'XS YS', 'met-le' => 'VALUE TARGET',
      'fig' => 'KEY LABEL VALUE UNIT TARGET MET [NOTE]', 'meta' => 'KEY JSON',
      'write' => 'WORK RESULTS STAMP STATUS', 'pss-idle' => 'K < PSS', 'pss-avg' => '< PSS',
      'pss-total' => '< PSS', 'pss-note' => '< PSS', 'checked-in' => 'FROM TO < RUNS',
      'all-in-at' => 'SINCE CLONES < RUNS', 'starts' => '< RUNS', 'phasing' => 'FROM INTERVAL < STARTS',
      'derive' => 'RESULTS/STAMP [--write]', 'pages' => 'RESULTS HELPER', 'run' => '', 'start' => '',
      'status' => 'RESULTS/STAMP.raw', 'stop' => 'RESULTS/STAMP.raw',
      'across' => "RESULTS/STAMP... (at least #{Stats::MIN_MEDIAN_RUNS}) [--json]"
    }.freeze
    ARITY = {
      'min-runs' => 0..0, 'median' => 0..0, 'median-any' => 0..0, 'quote' => 1.., 'ratio' => 4..4,
      'slope' => 2..2, 'met-le' => 2..2, 'fig' => 6..7, 'meta' => 2..2, 'write' => 4..4, 'pss-idle' => 1..1,
      'pss-avg' => 0..0, 'pss-total' => 0..0, 'pss-note' => 0..0, 'checked-in' => 2..2, 'all-in-at' => 2..2,
      'starts' => 0..0, 'phasing' => 2..2, 'derive' => 1..2, 'pages' => 2..2, 'run' => 0..0, 'start' => 0..0,
      'status' => 1..1, 'stop' => 1..1, 'across' => 1..
    }.freeze

    def self.run(argv, stdin, stdout, stderr)
      new(stdin, stdout, stderr).call(argv)
    rescue ArgumentError, KeyError, Errno::ENOENT, RuntimeError => e
      stderr.puts("bench.rb: #{e.message}")
      2
    end

    def initialize(stdin, stdout, stderr)
      @in = stdin
      @out = stdout
      @err = stderr
    end

    def call(argv)
      verb, *args = argv
      unless ARITY.key?(verb) && ARITY[verb].cover?(args.size)
        raise ArgumentError, "usage: bench.rb #{verb} #{USAGE[verb]}" if USAGE.key?(verb)

        raise ArgumentError, "unknown verb #{verb.inspect}; one of: #{USAGE.keys.join(', ')}"
      end
      send("verb_#{verb.tr('-', '_')}", *args) || 0
    end

    private

    def say(value)
      @out.puts(value.nil? ? 'null' : value)
      0
    end

    def words
      @in.read.split
    end

    def verb_min_runs
      say(Stats::MIN_MEDIAN_RUNS)
    end

    def verb_median
      say(Stats.fixed(Stats.median(words)))
    end

    # Whole counts (a catalog's resources) stay whole; others get three decimals.
    def verb_median_any
      median = Stats.median(words, min: 1)
      say(median == median.floor ? Integer(median) : Stats.fixed(median))
    end

    def verb_quote(*runs)
      say(Stats.quote(runs))
    end

    def verb_ratio(num, den, num_name, den_name)
      value, note = Stats.ratio(num, den, [num_name, den_name])
      say("#{Stats.fixed(value)} #{note}")
    end

    def verb_slope(xvals, yvals)
      value = Stats.slope(xvals.split, yvals.split)
      say(value && Stats.fixed(value, 9))
    end

    def verb_met_le(value, target)
      say(!value.empty? && value != 'null' && Float(value) <= Float(target))
    end

    def verb_fig(*args)
      say(JSON.generate(Results.figure_from_words(args)))
    end

    def verb_meta(key, json)
      say(JSON.generate(key => Results.json_word(json, 'JSON')))
    end

    def verb_write(work, results, stamp, status)
      doc = Results.document(
        started: stamp, finished: Time.now.utc.strftime('%Y-%m-%dT%H:%M:%SZ'), status: status,
        scale: json_lines(File.join(work, 'meta')).reduce({}, :merge), figures: json_lines(File.join(work, 'figures'))
      )
      File.write(File.join(results, "#{stamp}.json"), Results.json(doc))
      File.write(File.join(results, "#{stamp}.md"), Results.markdown(doc))
      @out.write(Results.markdown(doc))
      0
    end

    def json_lines(path)
      File.exist?(path) ? File.readlines(path).reject { |l| l.strip.empty? }.map { |l| JSON.parse(l) } : []
    end

    def verb_pss_idle(count)
      @out.write(Pss.lines(Pss.idle(Pss.parse(@in.read), Integer(count))))
      0
    end

    def verb_pss_avg
      say(Pss.average_mib(Pss.parse(@in.read)))
    end

    def verb_pss_total
      say(Pss.total_mib(Pss.parse(@in.read)))
    end

    def verb_pss_note
      say(Pss.note(Pss.parse(@in.read)))
    end

    def verb_checked_in(from, upto)
      say(Runs.checked_in(Runs.parse(@in.read), Float(from), Float(upto)))
    end

    def verb_all_in_at(since, clones)
      at = Runs.all_in_at(Runs.parse(@in.read), Float(since), Integer(clones))
      @out.puts(at.nil? ? '' : Stats.fixed(at, 0))
      0
    end

    def verb_starts
      Runs.starts(Runs.parse(@in.read)).sort.each { |clone, t| @out.puts("#{clone} #{Stats.fixed(t)}") }
      0
    end

    def verb_phasing(from, interval)
      starts = @in.read.each_line.map(&:split).reject(&:empty?).map { |c, t| [c, Float(t)] }
      ph = Runs.phasing(starts, Float(from), Float(interval))
      twice = "#{Stats.fixed(ph[:even_twice], 4)} #{Stats.fixed(ph[:even_twice] * ph[:total], 1)}"
      say("#{ph[:share] || 'null'} #{ph[:best]} #{ph[:total]} #{ph[:met]} #{twice}")
    end

    def verb_derive(prefix, flag = nil)
      raise ArgumentError, "derive takes --write or nothing after RESULTS/STAMP, not #{flag.inspect}" unless [nil, '--write'].include?(flag)

      derive = Derive.new(prefix)
      doc = derive.derived
      if flag
        File.write("#{derive.prefix}.json", Results.json(doc))
        File.write("#{derive.prefix}.md", Results.markdown(doc))
      end
      @out.write(Results.markdown(doc))
      report_differences(derive.differences)
    end

    def report_differences(diffs)
      diffs.each { |key, was, now| @err.puts("bench.rb: #{key}: committed #{was.inspect}, derived #{now.inspect}") }
      diffs.empty? ? 0 : 1
    end

    # The bench itself (make bench): its settings come from the environment;
    # BENCH_STAMP (`start` gives it) names its result.
    def verb_run
      stamp = ENV.fetch('BENCH_STAMP', nil)
      return Driver.new(out: @out).run if stamp.nil?
      raise ArgumentError, "BENCH_STAMP must be a stamp like 2026-11-29T043000Z, not #{stamp.inspect}" unless Detached::STAMP.match?(stamp)

      Driver.new(out: @out, stamp: stamp).run
    end

    # The bench in the background (make bench-checkin); a dry run prints its plan here.
    def verb_start
      return verb_run if ENV['BENCH_DRY_RUN'] == '1'

      Detached.start(ENV, @out, results: Driver::RESULTS)
    rescue Refused => e
      @err.puts("bench.rb: #{e.message}")
      2
    end

    def verb_status(dir)
      Detached.status(dir, @out)
    end

    def verb_stop(dir)
      Detached.stop(dir, @out)
    end

    # Runs of one bench side by side, each figure's median of them with every run.
    def verb_across(*args)
      json = args.delete('--json')
      across = Across.new(args)
      @out.write(json ? across.json : across.markdown)
      0
    end

    def verb_pages(results, helper)
      Pages.make(results, helper).each { |page| @out.puts(page) }
      0
    end
  end
end
